// CreditSender<Net>: the sending end of a credit-based interface on a messaging network
// (Buono & Mencagli's UDN interface). The receiver sent it K credits (messages tagged
// `ack_tag` carrying a count: detail/credit_setup.hpp) before the first send; a send spends
// one credit per item taken from the sender's ack inbox (what is back is taken together) and
// pushes the item, so at most K items are ever in flight and a credit always stands for room
// set aside in the receiver's queue (1 + payload_words words: what the item takes as a
// message of its own; in a run with others it takes less, detail/item_runs.hpp).
//
// try_send never blocks: false when no credit has come back (or, rarely, the network
// refused the push; the credit is then kept for the next try: credits_held() != 0). send()
// waits through a WaitPolicy, parked on the ack queue's doorbell when the network rings one;
// a refusal with a credit in hand parks in short naps instead (Doorbell::retry_soon): no
// credit is coming to ring it, and the event device rings nobody when it has room again.
// Thread-safety: the thread that drives the sender's tile. An end fills its own cache lines,
// so the two ends of an interface built side by side do not share one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "framework/noc/detail/item_runs.hpp"
#include "framework/noc/inbox.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc {

template <typename Net>
class alignas(64) CreditSender {
public:
    // The data tag's binding at the receiver is resolved now (a Net::Route): bind it first.
    // `owns_queue`: the data queue is claimed for this sender, or for the credit interfaces
    // that share it, and its room set aside for credits, so its pushes skip the room check
    // (Net::try_push_credited).
    CreditSender(Net& net, TileId self, TileId receiver, Tag data_tag, Tag ack_tag, Inbox<Net> acks,
                 uint32_t payload_words, bool owns_queue)
        : net_(&net), self_(self), ack_tag_(ack_tag), acks_(acks), words_(payload_words),
          route_(net.route(self, receiver, data_tag)), owns_queue_(owns_queue),
          run_max_(std::max(1u, net.config().max_payload / std::max(1u, payload_words))) {}

    // Sends `payload_words` words from `payload` as one message.
    bool try_send(const uint64_t* payload) {
        if (credits_ == 0 && !take_credits(kBatch)) return false;
        if (!(owns_queue_ ? net_->try_push_credited(route_, payload, words_) : net_->try_push(route_, payload, words_))) {
            // Refused: the event device is out of room. The credit messages waiting in the ack
            // queue hold some of it; taking them all gives it back, so the device cannot stay
            // full of credits that nobody takes while their senders wait for room.
            take_credits(~0u);
            return false;
        }
        --credits_;
        return true;
    }

    // Sends up to `n` items (payloads back to back, payload_words each, read as bytes: the
    // items may be descriptors) with the credits at hand; returns how many went (m). On a
    // network that carries runs (MessageNetwork), into a queue of the interface's own (a
    // symmetric link's, or the asymmetric interface's that only credited senders share),
    // they go as runs of at most max_payload words (detail/item_runs.hpp); into a queue
    // logical channels multiplex, as m one-item messages in one reservation.
    uint32_t try_send_many(const void* payload, uint32_t n) {
        const auto* bytes = static_cast<const std::byte*>(payload);
        const size_t item = sizeof(uint64_t) * words_;
        if constexpr (detail::RunNetwork<Net>) {
            if (credits_ < n) take_credits(n);
            const uint32_t m = credits_ < n ? credits_ : n;
            if (m == 0) return 0;
            if (owns_queue_) {
                for (uint32_t i = 0; i < m;) {  // credited: cannot fail
                    const uint32_t k = m - i < run_max_ ? m - i : run_max_;
                    net_->try_push_many(route_, bytes + i * item, words_ * k, 1, true);
                    i += k;
                }
            } else if (!net_->try_push_many(route_, payload, words_, m, false)) {
                return 0;
            }
            credits_ -= m;
            return m;
        } else {
            uint32_t i = 0;
            uint64_t words[kMaxPayload];
            for (; i < n; ++i) {
                std::memcpy(words, bytes + i * item, item);
                if (!try_send(words)) break;
            }
            return i;
        }
    }

    void send(const uint64_t* payload, const WaitPolicy& policy = {}) {
        Doorbell* bell = acks_.bell();
        policy.wait([&] { return try_send(payload); },
                    [&](auto& attempt) {
                        // A failed attempt never spends a credit, so one look here is enough.
                        if (bell != nullptr && credits_ != 0) bell->retry_soon();
                        return park_on(bell, policy, attempt);
                    });
    }

    TileId tile() const { return self_; }
    uint32_t payload_words() const { return words_; }
    uint32_t credits_held() const { return credits_; }  // popped but not yet spent
    uint64_t strays() const { return strays_; }         // non-credit messages found among the acks

private:
    // Pops the credits that are back until `want` are held: one visit to the ack queue
    // serves several sends when the receiver is ahead. True when at least one is held.
    bool take_credits(uint32_t want) {
        MessageHeader h;
        uint64_t scratch[kMaxPayload];
        while (credits_ < want && acks_.try_pop(h, scratch)) {
            if (h.tag == ack_tag_ && h.length == 1) credits_ += static_cast<uint32_t>(scratch[0]);
            else ++strays_;
        }
        return credits_ != 0;
    }

    static constexpr uint32_t kBatch = 16;  // credits a one-message send takes at once

    Net* net_;
    TileId self_;
    Tag ack_tag_;
    Inbox<Net> acks_;
    uint32_t words_;
    typename Net::Route route_;
    bool owns_queue_;
    uint32_t run_max_;  // items one run carries at most (max_payload / payload_words)
    uint32_t credits_ = 0;
    uint64_t strays_ = 0;
};

}  // namespace tp::noc
