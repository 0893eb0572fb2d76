// The TSC at which a packet entered the app, and (with `latency: all`) at which the last node
// that worked on it handed it on, in mbuf dynamic fields (the 16-byte descriptor has no room).
// Sources' nodes write the entry stamp of the packets they pick as samples and mark them with a
// dynamic ol_flags bit; sinks' nodes read the stamp of marked packets (latency_probe.hpp).
// rte_pktmbuf_reset clears ol_flags on every allocation, so a recycled mbuf never carries a
// stale mark, and a source touches only the packets it samples (one in 64 by default).
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

namespace tp {

// Offsets of the fields in every mbuf; each is registered once, on first use (after EAL is
// up). Thread-safe.
int entry_tsc_offset();
int handoff_tsc_offset();
// The ol_flags bit that marks a packet whose entry stamp is a latency sample.
uint64_t entry_sampled_flag();

inline uint64_t& packet_tsc(rte_mbuf* m, int offset) { return *RTE_MBUF_DYNFIELD(m, offset, uint64_t*); }

}  // namespace tp
