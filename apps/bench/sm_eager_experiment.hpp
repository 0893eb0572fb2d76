#pragma once
#include "framework/channel/transport_sm.hpp"
namespace tp {
template <typename T, typename Layout = SmSplitLayout<T>>
class SmEagerChannel final : public Channel<T> {
public:
    SmEagerChannel(uint32_t k, int socket = -1)
        : k_(detail::checked_capacity(Layout::kName, k, true)), mask_(k - 1), slots_(k, socket) {}

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        uint64_t seq = tx_.seq;
        uint32_t i = 0;
        for (; i < n; ++i, ++seq) {
            const uint32_t s = static_cast<uint32_t>(seq) & mask_;
            // acquire: pairs with the receiver's release of ack, so its read of msg (message
            // seq - K) is complete before we overwrite msg below.
            if (slots_.ack(s).load(std::memory_order_acquire) + k_ <= seq) break;
            slots_.msg(s) = items[i];
            // release: msg is visible to a receiver that reads ready == seq + 1 with acquire.
            slots_.ready(s).store(seq + 1, std::memory_order_release);
        }
        tx_.seq = seq;
        if (i != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        return i;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        uint64_t seq = rx_.seq;
        uint32_t i = 0;
        for (; i < n; ++i, ++seq) {
            const uint32_t s = static_cast<uint32_t>(seq) & mask_;
            // acquire: pairs with the sender's release of ready, so msg is the message seq.
            if (slots_.ready(s).load(std::memory_order_acquire) != seq + 1) break;
            items[i] = slots_.msg(s);
            // release: our read of msg happens before the sender's reuse of the slot.
            slots_.ack(s).store(seq + 1, std::memory_order_release);
        }
        rx_.seq = seq;
        if (i != 0)
            if (Doorbell* b = this->sender_bell()) b->ring();
        return i;
    }

    uint32_t capacity() const override { return k_; }
    const char* transport() const override { return Layout::kName; }

private:
    struct alignas(detail::kCacheLine) Cursor {
        uint64_t seq = 0;  // next message number; private to one side
    };
    const uint32_t k_;
    const uint32_t mask_;
    Layout slots_;
    Cursor tx_;  // sender's
    Cursor rx_;  // receiver's
};

}  // namespace tp
