// The burst loops of the `udn` transports (UdnChannel on a private network, SharedUdnChannel
// on the app's): an item is one message of sizeof(T)/8 payload words. They differ only in
// how they ring the other side, which stays with them.
#pragma once

#include <cstdint>
#include <cstring>

#include "framework/runtime/doorbell.hpp"

namespace tp::detail {

// Sends items[0..n) through `tx` (a credit sender: try_send_many(const uint64_t*, uint32_t)),
// one message each, in runs of up to 32 (each run one reservation where the network offers
// it, see CreditSender::try_send_many), up to the first refusal; returns how many went.
template <typename T, typename Tx>
uint32_t udn_send_burst(Tx& tx, const T* items, uint32_t n) {
    uint64_t run[32 * (sizeof(T) / 8)];
    uint32_t sent = 0;
    while (sent < n) {
        const uint32_t want = n - sent < 32 ? n - sent : 32;
        std::memcpy(run, &items[sent], sizeof(T) * want);
        const uint32_t m = tx.try_send_many(run, want);
        sent += m;
        if (m < want) break;
    }
    return sent;
}

// Receives up to n items through `rx` (a credit receiver: try_recv_burst(uint64_t*, uint32_t))
// in runs of at most 32 messages; returns how many came.
template <typename T, typename Rx>
uint32_t udn_recv_burst(Rx& rx, T* items, uint32_t n) {
    uint64_t words[32 * (sizeof(T) / 8)];
    uint32_t got = 0;
    while (got < n) {
        const uint32_t want = n - got < 32 ? n - got : 32;
        const uint32_t m = rx.try_recv_burst(words, want);
        std::memcpy(&items[got], words, sizeof(T) * m);
        got += m;
        if (m < want) break;
    }
    return got;
}

// What no doorbell announces: credits the network refused (an event device out of room; it
// rings nobody when it has room again). A receiver still owing some, or a sender that
// stopped short with a credit in hand, polls again soon instead of sleeping out its park:
// its own doorbell's next park is a short nap (Doorbell::retry_soon). The sender it owes
// may be parked waiting for just those credits, and the receiver rings it once they go.
template <typename Rx>
void udn_retry_if_owing(const Rx& rx, Doorbell* own) {
    if (own != nullptr && rx.owes()) own->retry_soon();
}
template <typename Tx>
void udn_retry_if_refused(const Tx& tx, uint32_t sent, uint32_t n, Doorbell* own) {
    if (own != nullptr && sent < n && tx.credits_held() != 0) own->retry_soon();
}

}  // namespace tp::detail
