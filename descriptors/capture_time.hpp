// A packet's capture time (the timestamp its capture recorded, ns since the epoch), in an mbuf
// dynamic field with a dynamic flag in ol_flags saying it is there.
//
// The `pcap` source stamps it when it replays capture time (its `timestamps` setting); a packet
// without the flag (generated, received from a port, or replayed with `timestamps: replay`) has
// none. Stages that record when a packet was seen (pcap_out's record timestamps, flow_table's
// first_ns/last_ns) use it when present and their own clock otherwise. An mbuf allocated from a
// pool starts without the flag (allocation clears ol_flags); clones and copies carry both.
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

namespace tp {

struct CaptureTimeField {
    int offset = -1;    // of the uint64_t field
    uint64_t flag = 0;  // the ol_flags bit saying the field holds a capture time
};

// The field and flag, registered on first use (after EAL is up). Thread-safe; callers keep it
// (it never changes) rather than asking per packet.
CaptureTimeField capture_time_field();

inline void set_capture_ns(rte_mbuf* m, const CaptureTimeField& f, uint64_t ns) {
    *RTE_MBUF_DYNFIELD(m, f.offset, uint64_t*) = ns;
    m->ol_flags |= f.flag;
}
// True and the capture time in `ns` when the packet carries one.
inline bool capture_ns(const rte_mbuf* m, const CaptureTimeField& f, uint64_t& ns) {
    if ((m->ol_flags & f.flag) == 0) return false;
    ns = *RTE_MBUF_DYNFIELD(m, f.offset, const uint64_t*);
    return true;
}

}  // namespace tp
