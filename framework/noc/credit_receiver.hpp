// CreditReceiver<Net>: the receiving end of a credit-based interface, one-to-one or
// many-to-one. A receive pops messages from the receiver's data inbox and gives each sender
// (the header's source: the (sender id, word) pair of the paper's asymmetric interface) its
// credits back in one credit message per sender, carrying a count (detail/credit_setup.hpp).
// All senders share the one inbox, so a receive costs the same however many senders there
// are, idle or not.
//
// Credits are coalesced: a sender granted K credits gets them back once it is owed
// credit_batch(K) = max(1, K / 4), not after every receive, so a stream of single items costs
// a credit message per K/4 items rather than one per item (each a line written into the
// sender's ack queue and read back by the sender, and a doorbell fence). Nothing waits on the
// credits held back while the receiver receives: after every receive a sender is owed fewer
// than its batch <= K (credits the network refused aside, below), so a sender out of credits
// has items in this queue, and taking them pays it. A receiver that stops for good may hold
// up to batch - 1 of a sender's credits, so a sender that must still send after that (a
// cycle, such as the map's freed task slots) needs its receiver to keep receiving until it
// closes: the map's emitter does. (Paying debts whenever a receive finds the queue empty
// would lift that, but it made the map 1.5-2x slower on 2 CPUs: a receiver that keeps up
// finds it empty after nearly every item.)
//
// try_recv never blocks: false when no message is there. Credits the network refuses
// (possible only on the eventdev backend, when the device is out of room) are kept and
// pushed again before the next receive (owes() says so). recv() waits through a WaitPolicy,
// parked on the data queue's doorbell when the network rings one; while it owes credits its
// parks are short naps (Doorbell::retry_soon): the device rings nobody when it has room
// again, and the sender, out of credits, may be parked waiting for just these.
// Thread-safety: the thread that drives the receiver's tile. An end fills its own cache
// lines (see CreditSender).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "framework/noc/detail/credit_setup.hpp"
#include "framework/noc/detail/item_runs.hpp"
#include "framework/noc/inbox.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc {

template <typename Net>
class alignas(64) CreditReceiver {
public:
    // The ack tag's binding at every tile is resolved now (a Net::Route per tile): bind the
    // senders' ack tags first. `owns_ack_queues`: each sender's ack queue is claimed for
    // this receiver and holds only this interface's credits, so credit pushes skip the room
    // check (Net::try_push_credited).
    CreditReceiver(Net& net, TileId self, Tag data_tag, Tag ack_tag, Inbox<Net> data, uint32_t payload_words,
                   bool owns_ack_queues)
        : net_(&net), self_(self), data_tag_(data_tag), ack_tag_(ack_tag), data_(data), words_(payload_words),
          owns_ack_queues_(owns_ack_queues), owed_(net.tiles(), 0), batch_(net.tiles(), 1), marked_(net.tiles(), 0) {
        owing_.reserve(net.tiles());
        credited_.reserve(net.tiles());
        credit_routes_.reserve(net.tiles());
        for (TileId t = 0; t < net.tiles(); ++t) credit_routes_.push_back(net.route(self, t, ack_tag));
    }

    // The receiver's first act for each sender: K credits, pushed to its ack queue; and the
    // credits it may be owed before they go back (its batch, see the top).
    void grant(TileId sender, uint32_t credits) {
        detail::grant_credits(*net_, self_, sender, ack_tag_, credits);
        batch_[sender] = credit_batch(credits);
    }

    // Receives one item into `payload` (payload_words words); `source` gets its sender tile.
    bool try_recv(uint64_t* payload, TileId& source) {
        if constexpr (kRuns) {
            if (data_.demux == nullptr) return pop_items(payload, 1, &source) == 1;
        }
        if (!owing_.empty()) return_credits();  // what the network refused before
        MessageHeader h;
        uint64_t scratch[kMaxPayload];
        for (;;) {
            if (!data_.try_pop(h, scratch)) return false;
            if (h.tag == data_tag_ && h.length == words_) break;
            ++strays_;
        }
        std::memcpy(payload, scratch, sizeof(uint64_t) * words_);
        source = h.source;
        owe(h.source);
        return_credits();
        return true;
    }

    // Receives up to `n` items, payloads back to back (n x payload_words words, written as
    // bytes: the items may be descriptors); returns how many. On a network whose senders send
    // a burst as one run (MessageNetwork), from a queue of its own, a receive takes runs whole
    // (or the first part of one); otherwise one try_recv at a time.
    uint32_t try_recv_burst(void* payload, uint32_t n) {
        if constexpr (kRuns) {
            if (data_.demux == nullptr) return pop_items(payload, n, nullptr);
        }
        auto* bytes = static_cast<std::byte*>(payload);
        uint32_t got = 0;
        TileId source;
        uint64_t words[kMaxPayload];
        for (; got < n && try_recv(words, source); ++got)
            std::memcpy(bytes + size_t{got} * words_ * sizeof(uint64_t), words, words_ * sizeof(uint64_t));
        return got;
    }

    void recv(uint64_t* payload, TileId& source, const WaitPolicy& policy = {}) {
        Doorbell* bell = data_.bell();
        policy.wait([&] { return try_recv(payload, source); },
                    [&](auto& attempt) {
                        // A failed attempt adds no debt (only a receive does), so one look
                        // before announcing covers the re-check inside park_on.
                        if (bell != nullptr && owes()) bell->retry_soon();
                        return park_on(bell, policy, attempt);
                    });
    }

    // Credits the network refused, still to be pushed (by the next receive, even one that
    // finds no message).
    bool owes() const { return !owing_.empty(); }

    // Calls f(tile) once for each sender tile that credits reached since the last call (a
    // receive's or a repayment's), and forgets them: whom a receive may have to wake. A
    // sender that got no credit is not waiting on this receiver, however many there are.
    template <typename F>
    void take_credited(F&& f) {
        for (TileId t : credited_) {
            marked_[t] = 0;
            f(t);
        }
        credited_.clear();
    }

    TileId tile() const { return self_; }
    uint32_t payload_words() const { return words_; }
    // Messages of another tag, or whose length is no whole number of items, dropped.
    uint64_t strays() const { return strays_; }

private:
    // Whether senders on Net send a burst as one message (detail/item_runs.hpp).
    static constexpr bool kRuns = detail::RunNetwork<Net>;

    // Up to n items from the runs at the head of the data queue, their credits owed to each
    // run's sender and returned; `source`, when set, gets the sender of the last run taken
    // from (the only one when n is 1). A message that is no run of this interface's items at
    // the head is dropped as a stray.
    uint32_t pop_items(void* payload, uint32_t n, TileId* source) {
        if (!owing_.empty()) return_credits();  // what the network refused before
        for (;;) {
            bool stray = false;
            TileId last = 0;
            const uint32_t got = net_->try_pop_items(data_.mailbox, data_tag_, words_, n, payload, stray,
                                                     [&](TileId s, uint32_t items) {
                                                         owe(s, items);
                                                         last = s;
                                                     });
            if (got != 0) {
                if (source != nullptr) *source = last;
                return_credits();
                return got;
            }
            if (!stray) return 0;
            MessageHeader h;
            uint64_t scratch[kMaxPayload];
            if (data_.try_pop(h, scratch)) ++strays_;
        }
    }

    // One credit message returning `count` credits to `to`.
    bool push_credit(TileId to, uint64_t count) {
        const typename Net::Route& r = credit_routes_[to];
        return owns_ack_queues_ ? net_->try_push_credited(r, &count, 1) : net_->try_push(r, &count, 1);
    }

    // The credits of `count` items received from `to`; due (returned by the next
    // return_credits()) once they reach its batch.
    void owe(TileId to, uint32_t count = 1) {
        const uint32_t before = owed_[to];
        owed_[to] = before + count;
        if (before < batch_[to] && owed_[to] >= batch_[to]) owing_.push_back(to);
    }

    // One credit message per sender whose credits are due, with all it is owed; a sender whose
    // message the network refuses stays owed (and is paid before the next receive). Each
    // sender paid is noted for take_credited(): it may be parked waiting for them.
    void return_credits() {
        size_t kept = 0;
        for (TileId t : owing_) {
            if (push_credit(t, owed_[t])) {
                owed_[t] = 0;
                note_credited(t);
            } else {
                owing_[kept++] = t;
            }
        }
        owing_.resize(kept);
    }

    void note_credited(TileId to) {
        if (marked_[to] != 0) return;
        marked_[to] = 1;
        credited_.push_back(to);
    }


    Net* net_;
    TileId self_;
    Tag data_tag_;
    Tag ack_tag_;
    Inbox<Net> data_;
    uint32_t words_;
    bool owns_ack_queues_;
    std::vector<typename Net::Route> credit_routes_;  // per tile: where its credits go
    std::vector<uint32_t> owed_;     // per sender tile: credits not yet returned
    std::vector<uint32_t> batch_;    // per sender tile: owed_ at which they are due (grant())
    std::vector<TileId> owing_;      // the tiles with owed_ >= batch_: due
    std::vector<uint8_t> marked_;    // per tile: in credited_
    std::vector<TileId> credited_;   // sender tiles credited since take_credited(), each once
    uint64_t strays_ = 0;
};

}  // namespace tp::noc
