// The map's channels on one messaging network, as an app's map on `udn` gets them: the
// emitter's and the workers' multicast links and every worker's partials to the collector
// planned together (framework/graph/network_plan.hpp) on one network of W + 2 tiles with
// 4 queues of 128 words. The collector gathers through the asymmetric interface: one queue,
// K <= 128/(2W) credits per worker; tree links get K <= 64.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "framework/channel/channel.hpp"
#include "framework/graph/app_network.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/patterns/tree_multicast.hpp"

namespace tp::bench {

struct MapOnNetwork {
    std::unique_ptr<AppPlan> plan;
    std::unique_ptr<AppNetworks> network;
    std::vector<std::unique_ptr<Channel<uint64_t>>> inputs;    // per worker, from its parent
    std::vector<std::unique_ptr<Channel<uint64_t>>> partials;  // per worker, to the collector
};

// `capacity`: K asked for every link (lowered to what its queue holds).
MapOnNetwork map_on_network(uint32_t workers, Multicast mode, uint32_t capacity);

}  // namespace tp::bench
