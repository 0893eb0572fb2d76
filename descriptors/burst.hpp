// Burst: up to 32 descriptors handled together, the unit every hot path works on.
//
// A stage receives a burst, keeps the descriptors that go on at the front (in order) and
// sets `n` to their count; dropped descriptors were freed by the stage. A burst is a plain
// value living on a tile's stack or in a node; it never allocates.
#pragma once

#include <cstdint>

#include "descriptors/packet_desc.hpp"

namespace tp {

inline constexpr uint16_t kBurstMax = 32;

struct Burst {
    uint16_t n = 0;
    alignas(64) PacketDesc d[kBurstMax];

    bool empty() const { return n == 0; }
    bool full() const { return n == kBurstMax; }
    PacketDesc* begin() { return d; }
    PacketDesc* end() { return d + n; }
    const PacketDesc* begin() const { return d; }
    const PacketDesc* end() const { return d + n; }
};

}  // namespace tp
