// Small networks and credit links the noc tests build again and again.
#pragma once

#include <cstdint>

#include "framework/noc/credit_channel.hpp"
#include "framework/noc/network_config.hpp"

namespace tp::noc::test {

// `tiles` tiles with one queue of `queue_words` each.
inline NetworkConfig one_queue_net(uint32_t tiles, uint32_t queue_words) {
    NetworkConfig c;
    c.tiles = tiles;
    c.queues = 1;
    c.queue_words = queue_words;
    return c;
}

// Tile 0 to tile 1, queue 0 both ways, K credits, items of `payload_words` words.
inline CreditChannelConfig credit_link(uint32_t credits, uint32_t payload_words = 1) {
    CreditChannelConfig c;
    c.sender = 0;
    c.receiver = 1;
    c.credits = credits;
    c.payload_words = payload_words;
    return c;
}

}  // namespace tp::noc::test
