// Inbox<Net>: where one end of a credit interface receives: a physical queue of its own, or
// its tag's share of a queue several logical channels multiplex (a QueueDemux). One branch
// per pop is what lets the same credit code serve both.
#pragma once

#include <cstdint>

#include "framework/noc/network_config.hpp"
#include "framework/noc/queue_demux.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp::noc {

template <typename Net>
struct Inbox {
    Net* net = nullptr;
    TileId tile = 0;
    uint32_t queue = 0;
    QueueDemux<Net>* demux = nullptr;  // set: a logical channel's share of `queue`
    uint32_t handle = 0;               // its handle in the demux

    // `payload` needs room for kMaxPayload words.
    bool try_pop(MessageHeader& header, uint64_t* payload) const {
        return demux != nullptr ? demux->try_pop(handle, header, payload) : net->try_pop(tile, queue, header, payload);
    }
    Doorbell* bell() const { return net->data_bell(tile, queue); }
};

}  // namespace tp::noc
