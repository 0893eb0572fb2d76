// The set-up every credit interface does, as RAII pieces: bind a tag to a queue, set room
// aside in a queue, claim a queue for its one sender or its credited senders (each undone on
// destruction), and the
// receiver's first act, pushing K credits to a sender.
//
// A credit message carries a count: a header and one payload word, the number of credits it
// returns. A receiver returns what it owes a sender in one message, once it owes a quarter of
// its K (CreditReceiver), so a burst of 32 costs one credit message, not 32. Each message
// returns at least one credit, so a sender's ack queue holds at most K of them: kCreditWords x
// K words are set aside for it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc::detail {

// Binds `tag` to `queue` at `tile` unless `queue` is the catch-all (where unbound tags go).
template <typename Net>
class TagBinding {
public:
    TagBinding(Net& net, TileId tile, Tag tag, uint32_t queue) : net_(&net), tile_(tile), tag_(tag) {
        if (queue != net.catch_all()) {
            const uint32_t before = net.queue_of(tile, tag);
            if (before != net.catch_all() && before != queue)
                throw std::invalid_argument("tag " + std::to_string(tag) + " is bound to tile " + std::to_string(tile) +
                                            "'s queue " + std::to_string(before) + " already");
            net.bind_tag(tile, tag, queue);
            bound_ = true;
        }
    }
    ~TagBinding() {
        if (bound_) net_->unbind_tag(tile_, tag_);
    }
    TagBinding(const TagBinding&) = delete;
    TagBinding& operator=(const TagBinding&) = delete;

private:
    Net* net_;
    TileId tile_;
    Tag tag_;
    bool bound_ = false;
};

template <typename Net>
class RoomReservation {
public:
    RoomReservation(Net& net, TileId tile, uint32_t queue, uint64_t words, const std::string& who,
                    const std::string& hint)
        : net_(&net), tile_(tile), queue_(queue), words_(words) {
        net.ledger().reserve(tile, queue, words, who, hint);
    }
    ~RoomReservation() { net_->ledger().release(tile_, queue_, words_); }
    RoomReservation(const RoomReservation&) = delete;
    RoomReservation& operator=(const RoomReservation&) = delete;

private:
    Net* net_;
    TileId tile_;
    uint32_t queue_;
    uint64_t words_;
};

// Claims a queue for one interface's sender, or (kCreditedSenders) for credit interfaces
// that share it: Net::claim_credited.
template <typename Net>
class QueueClaim {
public:
    QueueClaim(Net& net, TileId tile, uint32_t queue, TileId sender) : net_(&net), tile_(tile), queue_(queue) {
        if (sender == kCreditedSenders) net.claim_credited(tile, queue);
        else net.claim(tile, queue, sender);
    }
    ~QueueClaim() { net_->release_claim(tile_, queue_); }
    QueueClaim(const QueueClaim&) = delete;
    QueueClaim& operator=(const QueueClaim&) = delete;

private:
    Net* net_;
    TileId tile_;
    uint32_t queue_;
};

// The receiver's first act (CreditReceiver::grant): one credit message of K to the sender's
// ack queue.
template <typename Net>
void grant_credits(Net& net, TileId receiver, TileId sender, Tag ack_tag, uint32_t credits) {
    const uint64_t count = credits;
    net.push(receiver, sender, ack_tag, &count, 1, WaitPolicy{});
}

inline void check_credits(const char* who, uint32_t credits, uint32_t payload_words) {
    if (credits == 0) throw std::invalid_argument(std::string(who) + ": K (credits) must be at least 1, got 0");
    if (payload_words == 0 || payload_words > kMaxPayload)
        throw std::invalid_argument(std::string(who) + ": a message carries 1 to " + std::to_string(kMaxPayload) +
                                    " payload words, got " + std::to_string(payload_words));
}

}  // namespace tp::noc::detail
