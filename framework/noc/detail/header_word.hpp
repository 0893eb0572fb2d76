// A message header packed into one 64-bit word (bits 0-15 source tile, 16-31 tag, 32-47
// payload length), as it sits in a shared-memory queue.
#pragma once

#include <cstdint>

#include "framework/noc/network_config.hpp"

namespace tp::noc::detail {

inline uint64_t pack_header(TileId source, Tag tag, uint32_t length) {
    return uint64_t{source & 0xffffu} | (uint64_t{tag} << 16) | (uint64_t{length & 0xffffu} << 32);
}

inline uint32_t header_length(uint64_t word) { return static_cast<uint32_t>(word >> 32) & 0xffffu; }

inline MessageHeader unpack_header(uint64_t word) {
    return MessageHeader{static_cast<TileId>(word & 0xffffu), static_cast<Tag>(word >> 16), header_length(word)};
}

}  // namespace tp::noc::detail
