// AsymmetricCreditChannel<Net>: the paper's many-to-one interface on a messaging network:
// N sender tiles, one receiver tile, K credits per sender.
//
// Every sender pushes into the receiver's one data queue, so a message arrives as the
// (sender id, word) pair the paper describes (the id is the header's source) and a receive
// pops one queue whatever N is: idle senders cost nothing, unlike a scan over N one-to-one
// channels. Each sender gets its credits in its own ack queue (`ack_queue` at its tile).
// The data queue is the interface's own (claimed for its senders' credited pushes: a push
// without a credit into it, or a logical channel sharing it, is refused; not the catch-all)
// and must hold every sender's K messages: N x K x (1 + payload_words) <=
// queue_words, i.e. K <= 128/(2N) for one-word messages in 128-word queues; the constructor
// throws std::invalid_argument saying so otherwise.
//
// Selection: messages are received in the order the senders' pushes reserved room in the
// queue (first come, first served), not round-robin. Ordering: per-sender FIFO, exactly
// once. Thread-safety: sender(i) on sender i's tile thread, receiver() on the receiver's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/noc/credit_receiver.hpp"
#include "framework/noc/credit_sender.hpp"
#include "framework/noc/detail/credit_setup.hpp"
#include "framework/noc/network_config.hpp"

namespace tp::noc {

struct AsymmetricCreditConfig {
    TileId receiver = 0;
    std::vector<TileId> senders;  // distinct, none equal to the receiver
    uint32_t data_queue = 0;      // at the receiver
    uint32_t ack_queue = 0;       // at each sender
    Tag data_tag = 1;
    Tag ack_tag = 2;
    uint32_t credits = 4;         // K, per sender
    uint32_t payload_words = 1;
};

template <typename Net>
class AsymmetricCreditChannel {
public:
    AsymmetricCreditChannel(Net& net, const AsymmetricCreditConfig& c)
        : net_(net), config_(checked(net, c)), index_of_(net.tiles(), -1) {
        const auto n = static_cast<uint32_t>(c.senders.size());
        data_binding_ = std::make_unique<detail::TagBinding<Net>>(net, c.receiver, c.data_tag, c.data_queue);
        // Only the senders' credited pushes go there: each reserves with one fetch_add.
        data_claim_ = std::make_unique<detail::QueueClaim<Net>>(net, c.receiver, c.data_queue, detail::kCreditedSenders);
        const uint32_t per_message = 1 + c.payload_words;
        const uint32_t bound = net.config().queue_words / (per_message * n);
        rooms_.push_back(std::make_unique<detail::RoomReservation<Net>>(
            net, c.receiver, c.data_queue, uint64_t{n} * c.credits * per_message,
            "asymmetric credit channel: " + std::to_string(n) + " senders x K = " + std::to_string(c.credits) +
                " credits x (1 + " + std::to_string(c.payload_words) + ") words",
            "K <= " + std::to_string(net.config().queue_words) + "/(" + std::to_string(per_message) + "N) = " +
                std::to_string(bound)));
        for (uint32_t i = 0; i < n; ++i) {
            const TileId s = c.senders[i];
            index_of_[s] = static_cast<int32_t>(i);
            ack_bindings_.push_back(std::make_unique<detail::TagBinding<Net>>(net, s, c.ack_tag, c.ack_queue));
            rooms_.push_back(std::make_unique<detail::RoomReservation<Net>>(
                net, s, c.ack_queue, uint64_t{kCreditWords} * c.credits,
                "asymmetric credit channel: sender " + std::to_string(i) + "'s credits",
                "K <= " + std::to_string(net.config().queue_words) + "/" + std::to_string(kCreditWords) + " = " +
                    std::to_string(net.config().queue_words / kCreditWords)));
            ack_claims_.push_back(std::make_unique<detail::QueueClaim<Net>>(net, s, c.ack_queue, c.receiver));
            senders_.push_back(std::make_unique<CreditSender<Net>>(net, s, c.receiver, c.data_tag, c.ack_tag,
                                                                   Inbox<Net>(net, s, c.ack_queue), c.payload_words,
                                                                   true));  // the data queue is claimed for credits
        }
        receiver_ = std::make_unique<CreditReceiver<Net>>(net, c.receiver, c.data_tag, c.ack_tag,
                                                          Inbox<Net>(net, c.receiver, c.data_queue), c.payload_words,
                                                          true);  // each ack queue is claimed for it
        for (TileId s : c.senders) receiver_->grant(s, c.credits);
    }

    ~AsymmetricCreditChannel() {
        MessageHeader h;
        uint64_t scratch[kMaxPayload];
        while (net_.try_pop(config_.receiver, config_.data_queue, h, scratch)) {
        }
        for (TileId s : config_.senders)
            while (net_.try_pop(s, config_.ack_queue, h, scratch)) {
            }
    }
    AsymmetricCreditChannel(const AsymmetricCreditChannel&) = delete;
    AsymmetricCreditChannel& operator=(const AsymmetricCreditChannel&) = delete;

    uint32_t senders() const { return static_cast<uint32_t>(senders_.size()); }
    CreditSender<Net>& sender(uint32_t i) { return *senders_[i]; }
    CreditReceiver<Net>& receiver() { return *receiver_; }

    // Receives one message; `sender` gets the index (into config().senders) of who sent it.
    bool try_recv(uint64_t* payload, uint32_t& sender) {
        TileId source;
        if (!receiver_->try_recv(payload, source)) return false;
        sender = static_cast<uint32_t>(index_of_[source]);
        return true;
    }

    const AsymmetricCreditConfig& config() const { return config_; }

private:
    static const AsymmetricCreditConfig& checked(Net& net, const AsymmetricCreditConfig& c) {
        detail::check_credits("asymmetric credit channel", c.credits, c.payload_words);
        if (c.senders.empty()) throw std::invalid_argument("asymmetric credit channel: needs at least one sender");
        if (c.data_queue >= net.catch_all())
            throw std::invalid_argument("asymmetric credit channel: data queue " + std::to_string(c.data_queue) +
                                        " is not one of the receiver's " + std::to_string(net.catch_all()) +
                                        " queues (the catch-all takes every unbound tag; the interface needs a queue of its own)");
        std::vector<bool> seen(net.tiles(), false);
        for (TileId s : c.senders) {
            if (s >= net.tiles() || s == c.receiver || seen[s])
                throw std::invalid_argument("asymmetric credit channel: sender tile " + std::to_string(s) +
                                            " is out of range, the receiver, or listed twice");
            seen[s] = true;
        }
        return c;
    }

    Net& net_;
    AsymmetricCreditConfig config_;
    std::vector<int32_t> index_of_;  // tile -> sender index, -1 for non-senders
    std::unique_ptr<detail::TagBinding<Net>> data_binding_;
    std::unique_ptr<detail::QueueClaim<Net>> data_claim_;
    std::vector<std::unique_ptr<detail::TagBinding<Net>>> ack_bindings_;
    std::vector<std::unique_ptr<detail::RoomReservation<Net>>> rooms_;
    std::vector<std::unique_ptr<detail::QueueClaim<Net>>> ack_claims_;  // the receiver is each ack queue's one sender
    std::unique_ptr<CreditReceiver<Net>> receiver_;
    std::vector<std::unique_ptr<CreditSender<Net>>> senders_;
};

}  // namespace tp::noc
