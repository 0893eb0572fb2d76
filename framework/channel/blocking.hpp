// Blocking operations on a channel's ends: send/recv and their burst variants, built on the
// non-blocking try_* calls plus one WaitPolicy (spin, then yield, then park).
//
// They work on a Channel<T> (either end) and on an AsymmetricReceiver<T> (receive side): any
// type with value_type, try_* and park_receiver/park_sender. The runtime itself never
// blocks; these are for tools, tests, benchmarks and threads that own a whole end.
//  - send / send_burst return once every item is in the channel, waiting for room.
//  - recv returns true with one item, or false at end of stream (closed and drained).
//  - recv_burst returns between 1 and n items as soon as some are there, 0 at end of stream.
// To sleep rather than poll in the park phase, set the channel's doorbells (set_bells): the
// other side rings them; without doorbells the park phase naps briefly and polls again.
#pragma once

#include <cstdint>

#include "framework/runtime/wait_policy.hpp"

namespace tp {

template <typename Tx>
void send(Tx& tx, const typename Tx::value_type& item, const WaitPolicy& policy = {}) {
    policy.wait([&] { return tx.try_send(item); },
                [&](auto& attempt) { return tx.park_sender(policy, attempt); });
}

template <typename Tx>
void send_burst(Tx& tx, const typename Tx::value_type* items, uint32_t n, const WaitPolicy& policy = {}) {
    uint32_t done = tx.try_send_burst(items, n);
    if (done == n) return;
    policy.wait([&] { return (done += tx.try_send_burst(items + done, n - done)) == n; },
                [&](auto& attempt) { return tx.park_sender(policy, attempt); });
}

template <typename Rx>
bool recv(Rx& rx, typename Rx::value_type& item, const WaitPolicy& policy = {}) {
    bool got = false;
    policy.wait(
        [&] {
            if (rx.try_recv(item)) return got = true;
            // closed() is an acquire made after the sender's last send: if the channel is
            // still empty after seeing it, the stream is over.
            if (!rx.closed()) return false;
            got = rx.try_recv(item);
            return true;
        },
        [&](auto& attempt) { return rx.park_receiver(policy, attempt); });
    return got;
}

template <typename Rx>
uint32_t recv_burst(Rx& rx, typename Rx::value_type* items, uint32_t n, const WaitPolicy& policy = {}) {
    uint32_t got = 0;
    policy.wait(
        [&] {
            if ((got = rx.try_recv_burst(items, n)) != 0) return true;
            if (!rx.closed()) return false;
            got = rx.try_recv_burst(items, n);
            return true;
        },
        [&](auto& attempt) { return rx.park_receiver(policy, attempt); });
    return got;
}

}  // namespace tp
