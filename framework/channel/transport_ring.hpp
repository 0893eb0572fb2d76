// RingChannel<T>: the `ring` transport, the fast default. A single-producer single-consumer
// ring of 2^k slots (Lamport's queue with cached remote indices, as in FastFlow/rte_ring SPSC).
//
// Producer state (tail, cached head) and consumer state (head, cached tail) sit on separate
// cache lines; each side reads the other's index only when its cached copy says the ring
// looks full (producer) or empty (consumer), so in steady state a burst costs one remote
// line transfer per side instead of one per item. Slots live on the receiver's NUMA node.
// Ordering: FIFO, exactly once. Thread-safety: one sender thread, one receiver thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "framework/channel/channel.hpp"
#include "framework/channel/detail/capacity.hpp"
#include "framework/channel/detail/node_memory.hpp"

namespace tp {

template <typename T>
class RingChannel final : public Channel<T> {
public:
    explicit RingChannel(uint32_t capacity, int socket = -1)
        : mask_(detail::checked_capacity("ring", capacity, true) - 1),
          mem_(sizeof(T) * capacity, socket),
          slots_(static_cast<T*>(mem_.get())) {
        for (uint32_t i = 0; i < capacity; ++i) new (&slots_[i]) T{};
    }

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // only we write it
        uint64_t free = prod_.head_cache + mask_ + 1 - tail;
        if (free < n) {
            // acquire: the consumer finished reading the slots before publishing `head`.
            prod_.head_cache = cons_.head.load(std::memory_order_acquire);
            free = prod_.head_cache + mask_ + 1 - tail;
            if (free == 0) return 0;
            if (free < n) n = static_cast<uint32_t>(free);
        }
        for (uint32_t i = 0; i < n; ++i) slots_[(tail + i) & mask_] = items[i];
        prod_.tail.store(tail + n, std::memory_order_release);  // slots written before tail moves
        if (Doorbell* b = this->receiver_bell()) b->ring();
        return n;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        const uint64_t head = cons_.head.load(std::memory_order_relaxed);  // only we write it
        uint64_t avail = cons_.tail_cache - head;
        if (avail < n) {
            // acquire: pairs with the producer's release of `tail`, so the slots are visible.
            cons_.tail_cache = prod_.tail.load(std::memory_order_acquire);
            avail = cons_.tail_cache - head;
            if (avail == 0) return 0;
            if (avail < n) n = static_cast<uint32_t>(avail);
        }
        for (uint32_t i = 0; i < n; ++i) items[i] = slots_[(head + i) & mask_];
        cons_.head.store(head + n, std::memory_order_release);  // slots read before they are reused
        if (Doorbell* b = this->sender_bell()) b->ring();
        return n;
    }

    uint32_t capacity() const override { return static_cast<uint32_t>(mask_ + 1); }
    const char* transport() const override { return "ring"; }

private:
    struct alignas(detail::kCacheLine) Producer {
        std::atomic<uint64_t> tail{0};
        uint64_t head_cache = 0;
    };
    struct alignas(detail::kCacheLine) Consumer {
        std::atomic<uint64_t> head{0};
        uint64_t tail_cache = 0;
    };
    const uint64_t mask_;
    detail::NodeMemory mem_;
    T* const slots_;
    Producer prod_;
    Consumer cons_;
};

}  // namespace tp
