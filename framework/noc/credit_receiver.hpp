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
    CreditReceiver(Net& net, TileId self, Tag data_tag, Tag ack_tag, Inbox<Net> data, uint32_t payload_words)
        : net_(&net), self_(self), data_tag_(data_tag), ack_tag_(ack_tag), data_(data), words_(payload_words),
          owed_(net.tiles(), 0) {}

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
        if (!net_->try_push(self_, h.source, ack_tag_, nullptr, 0)) {
            ++owed_[h.source];
            ++owed_total_;
        }
        return true;
    }

    void recv(uint64_t* payload, TileId& source, const WaitPolicy& policy = {}) {
        policy.wait([&] { return try_recv(payload, source); },
                    [&](auto& attempt) { return park_on(data_.bell(), policy, attempt); });
    }

    TileId tile() const { return self_; }
    uint32_t payload_words() const { return words_; }
    uint64_t strays() const { return strays_; }  // messages of another tag or length, dropped

private:
    void repay() {
        for (TileId t = 0; t < owed_.size() && owed_total_ != 0; ++t)
            while (owed_[t] != 0 && net_->try_push(self_, t, ack_tag_, nullptr, 0)) {
                --owed_[t];
                --owed_total_;
            }
    }

    Net* net_;
    TileId self_;
    Tag data_tag_;
    Tag ack_tag_;
    Inbox<Net> data_;
    uint32_t words_;
    std::vector<uint32_t> owed_;  // credits the network refused, per sender tile
    uint64_t owed_total_ = 0;
    uint64_t strays_ = 0;
};

}  // namespace tp::noc
