// CreditReceiver<Net>: the receiving end of a credit-based interface, one-to-one or
// many-to-one. A receive pops one message from the receiver's data inbox and pushes a
// credit back to the tile that sent it (the header's source: the (sender id, word) pair of
// the paper's asymmetric interface). All senders share the one inbox, so a receive costs
// the same however many senders there are, idle or not.
//
// try_recv never blocks: false when no message is there. A credit the network refuses
// (possible only on the eventdev backend, when the device is out of room) is kept and
// pushed again before the next receive. recv() waits through a WaitPolicy, parked on the
// data queue's doorbell when the network rings one.
// Thread-safety: the thread that drives the receiver's tile. An end fills its own cache
// lines (see CreditSender).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

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
        : net_(&net), self_(self), data_tag_(data_tag), data_(data), words_(payload_words),
          owns_ack_queues_(owns_ack_queues), owed_(net.tiles(), 0) {
        credit_routes_.reserve(net.tiles());
        for (TileId t = 0; t < net.tiles(); ++t) credit_routes_.push_back(net.route(self, t, ack_tag));
    }

    // Receives one message into `payload` (payload_words words); `source` gets its sender tile.
    bool try_recv(uint64_t* payload, TileId& source) {
        if (owed_total_ != 0) repay();
        MessageHeader h;
        uint64_t scratch[kMaxPayload];
        for (;;) {
            if (!data_.try_pop(h, scratch)) return false;
            if (h.tag == data_tag_ && h.length == words_) break;
            ++strays_;
        }
        std::memcpy(payload, scratch, sizeof(uint64_t) * words_);
        source = h.source;
        if (!push_credit(h.source)) {
            ++owed_[h.source];
            ++owed_total_;
        }
        return true;
    }

    // Receives up to `n` messages, payloads back to back (n x payload_words words); returns
    // how many. On a network that can pop a run of messages at once (MessageNetwork), from
    // a queue of its own, the reads of the run overlap; otherwise one try_recv at a time.
    uint32_t try_recv_burst(uint64_t* payload, uint32_t n) {
        if constexpr (requires(Net& net, const typename Net::Mailbox& m, MessageHeader* h, uint64_t* p) {
                          net.try_pop_many(m, Tag{}, 1u, 1u, h, p);
                      }) {
            if (data_.demux == nullptr) {
                if (owed_total_ != 0) repay();
                MessageHeader h[32];
                const uint32_t got = net_->try_pop_many(data_.mailbox, data_tag_, words_, n, h, payload);
                for (uint32_t i = 0; i < got; ++i)
                    if (!push_credit(h[i].source)) {
                        ++owed_[h[i].source];
                        ++owed_total_;
                    }
                if (got != 0 || n == 0) return got;
                // Nothing, or a stray at the head: the one-at-a-time path drops strays.
            }
        }
        uint32_t got = 0;
        TileId source;
        while (got < n && try_recv(payload + size_t{got} * words_, source)) ++got;
        return got;
    }

    void recv(uint64_t* payload, TileId& source, const WaitPolicy& policy = {}) {
        policy.wait([&] { return try_recv(payload, source); },
                    [&](auto& attempt) { return park_on(data_.bell(), policy, attempt); });
    }

    TileId tile() const { return self_; }
    uint32_t payload_words() const { return words_; }
    uint64_t strays() const { return strays_; }  // messages of another tag or length, dropped

private:
    bool push_credit(TileId to) {
        const typename Net::Route& r = credit_routes_[to];
        return owns_ack_queues_ ? net_->try_push_credited(r, nullptr, 0) : net_->try_push(r, nullptr, 0);
    }

    void repay() {
        for (TileId t = 0; t < owed_.size() && owed_total_ != 0; ++t)
            while (owed_[t] != 0 && push_credit(t)) {
                --owed_[t];
                --owed_total_;
            }
    }

    Net* net_;
    TileId self_;
    Tag data_tag_;
    Inbox<Net> data_;
    uint32_t words_;
    bool owns_ack_queues_;
    std::vector<typename Net::Route> credit_routes_;  // per tile: where its credits go
    std::vector<uint32_t> owed_;  // credits the network refused, per sender tile
    uint64_t owed_total_ = 0;
    uint64_t strays_ = 0;
};

}  // namespace tp::noc
