// AppNetworks: the messaging networks of a running app, built from its plan (one per
// transport in AppPlan::networks, see network_plan.hpp): the network, its tag bindings, the
// room set aside for every interface's credits, the claimed queues, the logical channels'
// demultiplexers, the credit senders and receivers, and the channels the runner's tasks use.
//
// Build it before the tiles start (the receivers grant their credits from the building
// thread) and destroy it after they joined and the channels are gone.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "descriptors/packet_desc.hpp"
#include "framework/channel/channel.hpp"
#include "framework/graph/memory_plan.hpp"
#include "framework/noc/network_config.hpp"

namespace tp {

struct AppPlan;
namespace noc {
class MessageNetwork;
}

class AppNetworks {
public:
    // Throws std::invalid_argument when a network cannot be built (the plan checks what a
    // config can get wrong; an eventdev network also needs EAL running). `node_places`, per
    // graph node (MemoryPlan::node), when the `memory:` setting binds: each shared-memory
    // tile's queues are bound to the place of the node it hosts, as a channel's buffers are
    // to their receiver's (the tile pops them).
    explicit AppNetworks(const AppPlan& plan, const std::vector<MemoryPlace>* node_places = nullptr);
    ~AppNetworks();
    AppNetworks(const AppNetworks&) = delete;
    AppNetworks& operator=(const AppNetworks&) = delete;

    // The channel of graph edge `edge`, or nullptr when the edge is on no network. Once per edge.
    std::unique_ptr<Channel<PacketDesc>> desc_channel(size_t edge);
    std::unique_ptr<Channel<uint64_t>> word_channel(size_t edge);

    // Messages that reached a catch-all (a tag no interface bound): popped and counted so
    // far, over every tile. Call it while the tiles are idle.
    uint64_t strays();

    // The shared-memory network of the `udn` links, nullptr when there is none.
    noc::MessageNetwork* message_network();
    // What queue `queue` of network tile `tile` carried, and the pushes its network refused
    // (a full queue; on an event device also a device out of room), in network
    // `network` (AppPlan::networks' order).
    noc::QueueCounters counters(size_t network, uint32_t tile, uint32_t queue) const;

    // What `node_places` bound: each network queue, named "network queue 0 of tile 2 (node
    // parse)"; an eventdev network's tiles whose node asks for a placement appear with the
    // reason they are not bound.
    const std::vector<BoundArea>& bound_memory() const { return bound_; }

    struct Net;  // one network and what is built on it

private:
    std::vector<std::unique_ptr<Net>> nets_;
    std::vector<BoundArea> bound_;
};

}  // namespace tp
