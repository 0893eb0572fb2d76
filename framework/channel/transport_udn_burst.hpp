// The burst loops of the `udn` transports (UdnChannel on a private network, SharedUdnChannel
// on the app's): an item is sizeof(T)/8 payload words, and what one call sends travels as
// runs where the network carries them (noc/detail/item_runs.hpp). They differ only in how
// they ring the other side, which stays with them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "framework/runtime/doorbell.hpp"

namespace tp::detail {

// Sends items[0..n) through `tx` (a credit sender: try_send_many(const void*, uint32_t), which
// reads the items as bytes: no copy into words first, and sends runs for all the credits at
// hand allow); returns how many went.
template <typename T, typename Tx>
uint32_t udn_send_burst(Tx& tx, const T* items, uint32_t n) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0, "an item travels as whole 64-bit words");
    return tx.try_send_many(items, n);  // as many as the credits at hand allow
}

// Receives up to n items through `rx` (a credit receiver: try_recv_burst(void*, uint32_t),
// which writes them as bytes); returns how many came.
template <typename T, typename Rx>
uint32_t udn_recv_burst(Rx& rx, T* items, uint32_t n) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0, "an item travels as whole 64-bit words");
    return rx.try_recv_burst(items, n);
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
