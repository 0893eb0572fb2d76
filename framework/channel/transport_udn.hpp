// UdnChannel<T, Net>: transport `udn` (Net = noc::MessageNetwork, shared memory) and
// `udn_eventdev` (Net = noc::EventdevNetwork, a DPDK event device): a channel that is a
// credit-based interface on a messaging network, the network-processor mechanism.
//
// An item is sizeof(T)/8 payload words (one for a word, two for a PacketDesc), and what one
// send moves travels as one message, a run (noc/detail/item_runs.hpp); capacity K is the
// number of credits, so exactly K items fit. Built by the factory (`transport: udn`), a
// channel gets a private two-tile network (tile 0 sends, tile 1 receives) whose queues hold
// K one-item messages (128 words for K = 64 words, as on the UDN); the
// TILEPro64's fixed 128-word queues would cap K at 64 for words (K <= 128/2), so the
// emulation sizes them to K instead of refusing. In an app, `udn` links share the app's one
// network (SharedUdnChannel) and only `udn_pair` links are built this way.
// Built on a shared network, it is a CreditChannel there and that network's bound applies.
// Ordering: FIFO, exactly once. Thread-safety: one sender thread, one receiver thread (on
// the eventdev backend each is registered with EAL on first use).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "framework/channel/channel.hpp"
#include "framework/channel/detail/capacity.hpp"
#include "framework/channel/transport_udn_burst.hpp"
#include "framework/noc/credit_channel.hpp"
#include "framework/noc/eventdev_network.hpp"
#include "framework/noc/message_network.hpp"

namespace tp {

template <typename Net>
inline constexpr const char* udn_transport_name = std::is_same_v<Net, noc::EventdevNetwork> ? "udn_eventdev" : "udn";

template <typename T, typename Net = noc::MessageNetwork>
class UdnChannel final : public Channel<T> {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0 && sizeof(T) / 8 <= noc::kMaxPayload,
                  "an item travels as whole 64-bit payload words");

public:
    static constexpr uint32_t kWords = sizeof(T) / 8;
    static constexpr const char* kName = udn_transport_name<Net>;

    // A private two-tile network sized for `capacity` credits; `name`: the transport it
    // reports (`udn_pair` names one that stays private inside an app).
    explicit UdnChannel(uint32_t capacity, int socket = -1, const char* name = kName)
        : name_(name),
          own_(std::make_unique<Net>(private_network(detail::checked_capacity(name, capacity, false)))),
          link_(*own_, private_link(capacity)) {
        (void)socket;  // queues are placed by first touch: build the channel on the receiver's node
    }

    // A credit channel on a shared network; config.payload_words must be kWords.
    UdnChannel(Net& net, const noc::CreditChannelConfig& config)
        : link_(net, checked_link(config)) {}

    bool try_send(const T& item) override {
        uint64_t words[kWords];
        std::memcpy(words, &item, sizeof(T));
        const bool sent = link_.sender().try_send(words);
        if (sent)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        detail::udn_retry_if_refused(link_.sender(), sent ? 1 : 0, 1, this->sender_bell());
        return sent;
    }

    bool try_recv(T& item) override {
        uint64_t words[kWords];
        noc::TileId source;
        const bool got = link_.receiver().try_recv(words, source);
        if (got) std::memcpy(&item, words, sizeof(T));
        ring_credited();
        return got;
    }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        const uint32_t i = detail::udn_send_burst(link_.sender(), items, n);
        if (i != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        detail::udn_retry_if_refused(link_.sender(), i, n, this->sender_bell());
        return i;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        const uint32_t got = detail::udn_recv_burst(link_.receiver(), items, n);
        ring_credited();
        return got;
    }

    uint32_t capacity() const override { return link_.credits(); }
    const char* transport() const override { return name_; }

    noc::CreditChannel<Net>& link() { return link_; }

private:
    // After a receive: rings the sender when credits went back (with the items received, or
    // a repayment of credits the network refused before, which a receive that found nothing
    // makes too), and polls again soon while some are still owed.
    void ring_credited() {
        noc::CreditReceiver<Net>& rx = link_.receiver();
        bool credited = false;
        rx.take_credited([&](noc::TileId) { credited = true; });
        if (credited)
            if (Doorbell* b = this->sender_bell()) b->ring();
        detail::udn_retry_if_owing(rx, this->receiver_bell());
    }

    static noc::NetworkConfig private_network(uint32_t credits) {
        noc::NetworkConfig c;
        c.tiles = 2;
        c.queues = 1;
        // Just the room the credits need (K = 64 words: the UDN's 128): the pushes spend
        // credits and never look at the receiver's head, so no slack is needed, and a small
        // ring keeps its few lines hot in both caches.
        c.queue_words = std::bit_ceil(std::max<uint32_t>(2, credits * (1 + kWords)));
        c.max_payload = std::min(noc::kMaxPayload, c.queue_words - 1);  // a burst travels as one message
        c.doorbells = false;  // the Channel's own doorbells wake its ends
        return c;
    }
    static noc::CreditChannelConfig private_link(uint32_t credits) {
        noc::CreditChannelConfig c;
        c.credits = credits;
        c.payload_words = kWords;
        return c;
    }
    static const noc::CreditChannelConfig& checked_link(const noc::CreditChannelConfig& c) {
        detail::checked_capacity(kName, c.credits, false);
        if (c.payload_words != kWords)
            throw std::invalid_argument(std::string(kName) + " channel: items need " + std::to_string(kWords) +
                                        " payload words per message, the link has " + std::to_string(c.payload_words));
        return c;
    }

    const char* name_ = kName;
    std::unique_ptr<Net> own_;  // the private network, when there is one
    noc::CreditChannel<Net> link_;
};

}  // namespace tp
