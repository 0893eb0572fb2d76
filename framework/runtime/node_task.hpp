// NodeTask: one node of an app as the runtime polls it: an optional input channel, a stage,
// an optional output channel.
//
// poll() never blocks: it flushes descriptors the output refused last time, then takes one
// burst (from the source or the input channel), runs the stage on it once, and offers the
// result downstream. End of stream: a source returning Done, or an input that is closed and
// drained, closes the stage and then the output channel, so the end travels down the graph
// after the last packet. Counters are the stage's own (single writer: the tile running it).
#pragma once

#include "descriptors/burst.hpp"
#include "framework/channel/channel.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class NodeTask {
public:
    NodeTask(Stage* stage, Channel<PacketDesc>* in, Channel<PacketDesc>* out)
        : stage_(stage), in_(in), out_(out) {}

    // True when it moved at least one packet or reached end of stream.
    bool poll();
    bool done() const { return done_; }
    Stage& stage() { return *stage_; }

private:
    bool flush_pending();
    void finish();

    Stage* stage_;
    Channel<PacketDesc>* in_;
    Channel<PacketDesc>* out_;
    Burst pending_;          // descriptors waiting for room downstream
    uint16_t pending_at_ = 0;
    bool done_ = false;
};

}  // namespace tp
