// ItemBursts<Q, T>: bursts for a bench queue that moves one item at a time (CRTP: Q has
// try_send(const T&) and try_recv(T&)). A burst is a loop of single calls that stops at the
// first refusal; returns how many moved.
#pragma once

#include <cstdint>

namespace tp::bench {

template <typename Q, typename T>
struct ItemBursts {
    uint32_t try_send_burst(const T* v, uint32_t n) {
        uint32_t i = 0;
        while (i < n && self().try_send(v[i])) ++i;
        return i;
    }
    uint32_t try_recv_burst(T* v, uint32_t n) {
        uint32_t i = 0;
        while (i < n && self().try_recv(v[i])) ++i;
        return i;
    }

private:
    Q& self() { return static_cast<Q&>(*this); }
};

}  // namespace tp::bench
