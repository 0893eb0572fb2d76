#include "framework/channel/channel_factory.hpp"

#include <stdexcept>

#include "framework/channel/transport_dpdk.hpp"
#include "framework/channel/transport_lock.hpp"
#include "framework/channel/transport_ring.hpp"
#include "framework/channel/transport_sm.hpp"
#include "framework/channel/transport_sm_shared.hpp"
#include "framework/channel/transport_udn.hpp"

namespace tp {

const std::vector<std::string>& transport_names() {
    static const std::vector<std::string> names{"ring", "sm", "sm_shared", "dpdk", "lock", "udn", "udn_eventdev", "udn_pair"};
    return names;
}

template <typename T>
std::unique_ptr<Channel<T>> make_channel(const ChannelSpec& spec) {
    const std::string& t = spec.transport;
    if (t == "ring") return std::make_unique<RingChannel<T>>(spec.capacity, spec.socket);
    if (t == "sm") return std::make_unique<SmChannel<T>>(spec.capacity, spec.socket);
    if (t == "sm_shared") return std::make_unique<SmSharedChannel<T>>(spec.capacity, spec.socket);
    if (t == "dpdk") return std::make_unique<DpdkRingChannel<T>>(spec.capacity, spec.socket);
    if (t == "lock") return std::make_unique<LockChannel<T>>(spec.capacity);
    // Standalone, a udn channel is a network of its own two tiles; inside an app, `udn` links
    // share the app's network (framework/graph/app_network.hpp) and `udn_pair` keeps them apart.
    if (t == "udn" || t == "udn_pair") return std::make_unique<UdnChannel<T>>(spec.capacity, spec.socket, t == "udn" ? "udn" : "udn_pair");
    if (t == "udn_eventdev") return std::make_unique<UdnChannel<T, noc::EventdevNetwork>>(spec.capacity, spec.socket);
    std::string list;
    for (const auto& n : transport_names()) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown transport '" + t + "' (known: " + list + ")");
}

template std::unique_ptr<Channel<PacketDesc>> make_channel<PacketDesc>(const ChannelSpec&);
template std::unique_ptr<Channel<uint64_t>> make_channel<uint64_t>(const ChannelSpec&);

std::unique_ptr<Channel<PacketDesc>> make_desc_channel(const ChannelSpec& spec) {
    return make_channel<PacketDesc>(spec);
}
std::unique_ptr<Channel<uint64_t>> make_word_channel(const ChannelSpec& spec) {
    return make_channel<uint64_t>(spec);
}

}  // namespace tp
