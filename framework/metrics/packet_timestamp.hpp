// The TSC at which a packet entered the app, and (with `latency: all`) at which the last node
// that worked on it handed it on, in mbuf dynamic fields (the 16-byte descriptor has no room).
// Sources' nodes write the entry stamp of the packets they pick as samples and mark their
// descriptors (PacketDesc::sampled); sinks' nodes read the stamp of marked packets only
// (latency_probe.hpp), so no other mbuf is touched for latency.
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

namespace tp {

// Offsets of the fields in every mbuf; each is registered once, on first use (after EAL is
// up). Thread-safe.
int entry_tsc_offset();
int handoff_tsc_offset();

inline uint64_t& packet_tsc(rte_mbuf* m, int offset) { return *RTE_MBUF_DYNFIELD(m, offset, uint64_t*); }

}  // namespace tp
