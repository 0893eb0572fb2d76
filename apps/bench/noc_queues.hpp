// The messaging-network queues the benches measure, behind the benches' try_* interface:
//  - `udn`, `udn_pair`, `udn_eventdev`: the channel transports (UdnChannel on a private two-tile
//    network, shared memory or event device), reached through their final types;
//  - `udn_logical`: what multiplexing costs: kChannels logical channels share one physical
//    queue each way (each tile has one demux queue, so more interfaces than queues); item i
//    travels on logical channel i mod kChannels, each with K / kChannels credits.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/bench/item_bursts.hpp"
#include "framework/channel/transport_udn.hpp"
#include "framework/noc/logical_channel.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/noc/queue_demux.hpp"

namespace tp::bench {

template <typename T>
class UdnLogicalQueue : public ItemBursts<UdnLogicalQueue<T>, T> {
public:
    static constexpr uint32_t kChannels = 8;
    static constexpr uint32_t kWords = sizeof(T) / 8;

    explicit UdnLogicalQueue(uint32_t capacity)
        : net_(network(per_channel(capacity))), data_(net_, 1, 0), acks_(net_, 0, 0) {
        for (uint32_t i = 0; i < kChannels; ++i) {
            noc::LogicalChannelConfig c;
            c.data_tag = static_cast<noc::Tag>(2 * i + 1);
            c.ack_tag = static_cast<noc::Tag>(2 * i + 2);
            c.credits = per_channel(capacity);
            c.payload_words = kWords;
            chans_.push_back(std::make_unique<noc::LogicalChannel<noc::MessageNetwork>>(data_, acks_, c));
        }
    }

    bool try_send(const T& v) {
        uint64_t w[kWords];
        std::memcpy(w, &v, sizeof(T));
        if (!chans_[tx_]->sender().try_send(w)) return false;
        tx_ = tx_ + 1 == kChannels ? 0 : tx_ + 1;
        return true;
    }
    bool try_recv(T& v) {
        uint64_t w[kWords];
        noc::TileId source;
        if (!chans_[rx_]->receiver().try_recv(w, source)) return false;
        std::memcpy(&v, w, sizeof(T));
        rx_ = rx_ + 1 == kChannels ? 0 : rx_ + 1;
        return true;
    }

private:
    static uint32_t per_channel(uint32_t capacity) { return std::max<uint32_t>(1, capacity / kChannels); }
    static noc::NetworkConfig network(uint32_t k) {
        noc::NetworkConfig c;
        c.tiles = 2;
        c.queues = 1;
        c.queue_words = std::bit_ceil(2 * kChannels * k * (1 + kWords));  // slack, as UdnChannel
        c.max_payload = kWords;
        c.doorbells = false;
        return c;
    }

    noc::MessageNetwork net_;
    noc::QueueDemux<noc::MessageNetwork> data_;  // tile 1's queue 0: every channel's data
    noc::QueueDemux<noc::MessageNetwork> acks_;  // tile 0's queue 0: every channel's credits
    std::vector<std::unique_ptr<noc::LogicalChannel<noc::MessageNetwork>>> chans_;
    uint32_t tx_ = 0;
    uint32_t rx_ = 0;
};

inline bool is_noc_queue(const std::string& name) {
    return name == "udn" || name == "udn_eventdev" || name == "udn_logical" || name == "udn_pair";
}

// Calls f(std::type_identity<Q>{}) for the network queue `name` stands for; false if none.
template <typename T, typename F>
bool visit_noc_queue(const std::string& name, F&& f) {
    // A queue built alone is on a private two-tile network: `udn` and `udn_pair` alike here
    // (bench asym tells them apart: udn's rows use the one-queue many-to-one interface).
    if (name == "udn" || name == "udn_pair") f(std::type_identity<UdnChannel<T>>{});
    else if (name == "udn_eventdev") f(std::type_identity<UdnChannel<T, noc::EventdevNetwork>>{});
    else if (name == "udn_logical") f(std::type_identity<UdnLogicalQueue<T>>{});
    else return false;
    return true;
}

}  // namespace tp::bench
