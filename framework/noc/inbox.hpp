// Inbox<Net>: where one end of a credit interface receives: a physical queue of its own, or
// its tag's share of a queue several logical channels multiplex (a QueueDemux). The queue is
// resolved once (a Net::Mailbox); one branch per pop is what lets the same credit code serve
// both cases.
#pragma once

#include <cstdint>

#include "framework/noc/network_config.hpp"
#include "framework/noc/queue_demux.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp::noc {

template <typename Net>
struct Inbox {
    Inbox(Net& n, TileId t, uint32_t q, QueueDemux<Net>* d = nullptr, uint32_t h = 0)
        : net(&n), tile(t), queue(q), demux(d), handle(h), mailbox(n.mailbox(t, q)) {}

    Net* net;
    TileId tile;
    uint32_t queue;
    QueueDemux<Net>* demux;  // set: a logical channel's share of `queue`
    uint32_t handle;         // its handle in the demux
    typename Net::Mailbox mailbox;

    // `payload` needs room for kMaxPayload words.
    bool try_pop(MessageHeader& header, uint64_t* payload) const {
        return demux != nullptr ? demux->try_pop(handle, header, payload) : net->try_pop(mailbox, header, payload);
    }
    Doorbell* bell() const { return net->data_bell(tile, queue); }
};

}  // namespace tp::noc
