// A packet's length on the wire, next to the bytes the app holds, in an mbuf dynamic field.
//
// A capture taken with a short snapshot holds fewer bytes than the frame had: pkt_len is what
// was captured, the wire length what the capture recorded as the original length. Sources
// set it on every packet they emit (pcap: the record's original length; synth: the frame's
// length; port: pkt_len as received); bpf_filter's `len`, flow_table's byte counters and the
// pcap sink's record length read it. Clones and copies carry it (DPDK copies dynamic fields).
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

namespace tp {

// The field's offset in every mbuf, registered on first use (after EAL is up). Thread-safe;
// callers keep it (it never changes) rather than asking per packet.
int wire_length_offset();

inline uint32_t& wire_length(rte_mbuf* m, int offset) { return *RTE_MBUF_DYNFIELD(m, offset, uint32_t*); }
inline uint32_t wire_length(const rte_mbuf* m, int offset) {
    return *RTE_MBUF_DYNFIELD(m, offset, const uint32_t*);
}

}  // namespace tp
