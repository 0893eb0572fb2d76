// Stage is public (tilepipe/stage.hpp); in the tree its environment's types come with it.
#pragma once

#include "framework/stage/pending_outputs.hpp"
#include "tilepipe/stage.hpp"

namespace tp {

/// The mbufs a stage's drop() freed during one process() call, noted while the runtime
/// measures latency at a sink (a dropped packet is never a latency sample) or traces packets
/// (where each traced packet ended, and why).
struct DroppedPackets {
    uint16_t n = 0;                 ///< mbufs noted
    const void* mbuf[kBurstMax];    ///< the mbufs
    uint16_t reason[kBurstMax];     ///< each one's drop reason (the stage's declare_drop index)
};

/// The runtime's access to what a stage keeps for it; stages never see it.
struct StageRuntime {
    /// Set around a process() whose drops the runtime notes (nullptr: nothing noted).
    static void note_drops_into(Stage& st, DroppedPackets* into) { st.dropped_note_ = into; }
    /// Frame bytes of every packet drop() freed so far: the runtime takes a sink's drops out
    /// of the bytes it delivered. Written and read by the stage's own tile only.
    static uint64_t dropped_bytes(const Stage& st) { return st.dropped_bytes_; }
    /// What set_output() wrote for the burst the stage last processed, by slot.
    static const uint8_t* outputs(const Stage& st) { return st.output_; }
};

}  // namespace tp
