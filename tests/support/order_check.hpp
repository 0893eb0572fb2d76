// Test support: `test_order_check`, a sink that counts the packets it receives and those that
// arrive out of increasing index order, for the farm and network tests that check order.
#pragma once

#include <atomic>
#include <cstdint>

#include "descriptors/packet_desc.hpp"

namespace tp::test {

// synth numbers flows 10.0.x.y; with as many flows as packets, the flow is the packet's index.
uint32_t packet_index(const PacketDesc& d);

// What every `test_order_check` sink of the process saw since the last reset().
struct OrderCheckCounts {
    std::atomic<uint64_t> seen{0}, out_of_order{0};
    std::atomic<int64_t> last{-1};
    void reset() { seen = 0, out_of_order = 0, last = -1; }
};
OrderCheckCounts& order_check_counts();

}  // namespace tp::test
