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

namespace tp {

struct AppPlan;
namespace noc {
class MessageNetwork;
}

class AppNetworks {
public:
    // Throws std::invalid_argument when a network cannot be built (the plan checks what a
    // config can get wrong; an eventdev network also needs EAL running).
    explicit AppNetworks(const AppPlan& plan);
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

    struct Net;  // one network and what is built on it

private:
    std::vector<std::unique_ptr<Net>> nets_;
};

}  // namespace tp
