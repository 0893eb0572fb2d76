// Runs: how a credit interface's burst travels on a network that can carry it in one piece.
//
// A credit interface's item is payload_words words (a descriptor 2, a reference 1). On a
// network with RunNetwork's two calls (MessageNetwork), a sender whose data queue is its
// interface's own sends the items of one send as one message, a run: one header, then the
// items back to back, at most max_payload words (CreditSender::try_send_many). A receiver
// takes runs whole or their first items (TileQueue::try_pop_items) and owes one credit per
// item (returned a quarter of K at a time, CreditReceiver). A run of m items takes m x
// payload_words + 1 words, never more than the m x (1 + payload_words) its m credits set
// aside, so the room accounting is the message-per-item one's; what it saves is a header per
// item: a descriptor crosses in 16 bytes, not 24.
// Queues several logical channels share (QueueDemux) and the event device keep one message
// per item: a run is a credited push, and a credited push goes only into a queue claimed for
// one sender or for credited senders (MessageNetwork::try_push_many throws otherwise), which
// no logical channel may share. A message of the interface's tag whose length is a whole
// number of items counts as that many items, and earns its sender that many credits: only
// the queue's claimed sender (or its credited senders) can push there at all.
#pragma once

#include <cstdint>

#include "framework/noc/network_config.hpp"

namespace tp::noc::detail {

template <typename Net>
concept RunNetwork = requires(Net& net, const typename Net::Route& r, const typename Net::Mailbox& m,
                              const uint64_t* in, uint64_t* out, bool& stray) {
    net.try_push_many(r, in, 1u, 1u, true);
    net.try_pop_items(m, Tag{}, 1u, 1u, out, stray, [](TileId, uint32_t) {});
};

}  // namespace tp::noc::detail
