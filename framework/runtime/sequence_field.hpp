// The packet sequence number an ordered farm's emitter writes and its collector reads back,
// kept in an mbuf dynamic field (the descriptor has no room to spare).
#pragma once

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

namespace tp {

// Offset of the field in every mbuf; registers it on first use (after EAL is up). Thread-safe.
int sequence_field_offset();

inline uint32_t& packet_sequence(rte_mbuf* m, int offset) { return *RTE_MBUF_DYNFIELD(m, offset, uint32_t*); }

}  // namespace tp
