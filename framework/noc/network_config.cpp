#include "framework/noc/network_config.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "framework/topology/topology.hpp"

namespace tp::noc {

NetworkConfig NetworkConfig::for_topology(const Topology& topology) {
    NetworkConfig c;
    c.tiles = static_cast<uint32_t>(topology.tiles());
    return c;
}

uint32_t NetworkConfig::largest_queue() const {
    return queue_sizes.empty() ? queue_words : *std::max_element(queue_sizes.begin(), queue_sizes.end());
}

NetworkConfig validated(NetworkConfig c, const char* backend) {
    const std::string who = std::string(backend) + " network: ";
    auto fail = [&](const std::string& what) { throw std::invalid_argument(who + what); };
    if (c.tiles == 0 || c.tiles > 65535) fail("tiles must be between 1 and 65535, got " + std::to_string(c.tiles));
    if (c.queues == 0 || c.queues > 254)
        fail("queues per tile must be between 1 and 254 (the catch-all comes on top), got " + std::to_string(c.queues));
    if (c.queue_words < 2 || c.queue_words > kMaxQueueWords || (c.queue_words & (c.queue_words - 1)) != 0)
        fail("queue_words must be a power of two between 2 and 2^26, got " + std::to_string(c.queue_words));
    if (c.max_payload == 0 && c.queue_words >= 2) c.max_payload = std::min(kMaxPayload, c.queue_words - 1);
    if (c.max_payload == 0 || c.max_payload > kMaxPayload)
        fail("max_payload must be between 1 and " + std::to_string(kMaxPayload) + " words, got " +
             std::to_string(c.max_payload));
    if (c.max_payload + 1 > c.queue_words)
        fail("a " + std::to_string(c.max_payload) + "-word payload plus its header does not fit a " +
             std::to_string(c.queue_words) + "-word queue (max_payload must be at most queue_words - 1)");
    if (!c.queue_sizes.empty()) {
        if (c.queue_sizes.size() != size_t{c.tiles} * (c.queues + 1))
            fail("queue_sizes must have one entry per queue (" + std::to_string(size_t{c.tiles} * (c.queues + 1)) +
                 "), got " + std::to_string(c.queue_sizes.size()));
        for (uint32_t w : c.queue_sizes)
            if (w < c.max_payload + 1 || w > kMaxQueueWords || (w & (w - 1)) != 0)
                fail("every queue size must be a power of two between max_payload + 1 (" +
                     std::to_string(c.max_payload + 1) + ") and 2^26, got " + std::to_string(w));
    }
    return c;
}

}  // namespace tp::noc
