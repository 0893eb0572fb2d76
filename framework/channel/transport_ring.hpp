// RingChannel<T>: the `ring` transport, the fast default. A single-producer single-consumer
// ring (Lamport's queue with cached remote indices, as in FastFlow/rte_ring SPSC).
//
// Producer state (tail, cached head) and consumer state (head, cached tail) sit on separate
// cache-line pairs (detail/cache_line.hpp); each side reads the other's index only when its
// cached copy says the ring looks full (producer) or empty (consumer), so in steady state a
// burst costs one remote line transfer per side instead of one per item. Bursts copy as at
// most two contiguous runs. Two more mechanisms, both measured by `tilepipe bench stream`:
//  - the slot array holds 2 x capacity items while at most `capacity` are queued, so a full
//    ring never has the producer refilling the line the consumer is still reading;
//  - after a burst the consumer prefetches the lines of the next burst when those items are
//    already published, overlapping their transfer from the producer's cache with its work.
// Slots live on the receiver's NUMA node. Ordering: FIFO, exactly once. Thread-safety: one
// sender thread, one receiver thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "framework/channel/channel.hpp"
#include "framework/channel/detail/cache_line.hpp"
#include "framework/channel/detail/capacity.hpp"
#include "framework/channel/detail/node_memory.hpp"

namespace tp {

template <typename T>
class RingChannel final : public Channel<T> {
public:
    explicit RingChannel(uint32_t capacity, int socket = -1)
        : capacity_(detail::checked_capacity("ring", capacity, true)),
          slot_mask_(2 * uint64_t{capacity} - 1),
          mem_(sizeof(T) * 2 * capacity, socket),
          slots_(static_cast<T*>(mem_.get())) {
        for (uint64_t i = 0; i <= slot_mask_; ++i) new (&slots_[i]) T{};
    }

    // Single items skip the burst bookkeeping: same protocol, fewer instructions.
    bool try_send(const T& item) override {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // only we write it
        if (tail - prod_.head_cache == capacity_) {
            // acquire: the consumer finished reading the slot before publishing `head`.
            prod_.head_cache = cons_.head.load(std::memory_order_acquire);
            if (tail - prod_.head_cache == capacity_) return false;
        }
        slots_[tail & slot_mask_] = item;
        prod_.tail.store(tail + 1, std::memory_order_release);  // slot written before tail moves
        if (Doorbell* b = this->receiver_bell()) b->ring();
        return true;
    }

    bool try_recv(T& item) override {
        const uint64_t head = cons_.head.load(std::memory_order_relaxed);  // only we write it
        if (head == cons_.tail_cache) {
            // acquire: pairs with the producer's release of `tail`, so the slot is visible.
            cons_.tail_cache = prod_.tail.load(std::memory_order_acquire);
            if (head == cons_.tail_cache) return false;
        }
        item = slots_[head & slot_mask_];
        cons_.head.store(head + 1, std::memory_order_release);  // slot read before it is reused
        if (Doorbell* b = this->sender_bell()) b->ring();
        return true;
    }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // only we write it
        uint64_t free = prod_.head_cache + capacity_ - tail;
        if (free < n) {
            // acquire: the consumer finished reading the slots before publishing `head`.
            prod_.head_cache = cons_.head.load(std::memory_order_acquire);
            free = prod_.head_cache + capacity_ - tail;
            if (free == 0) return 0;
            if (free < n) n = static_cast<uint32_t>(free);
        }
        copy_in(tail, items, n);
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
        copy_out(head, items, n);
        cons_.head.store(head + n, std::memory_order_release);  // slots read before they are reused
        if (n >= kItemsPerLine) prefetch_next(head + n, avail - n < n ? avail - n : n);
        if (Doorbell* b = this->sender_bell()) b->ring();
        return n;
    }

    uint32_t capacity() const override { return static_cast<uint32_t>(capacity_); }
    const char* transport() const override { return "ring"; }
    int64_t queued() const override {
        // head first: tail only grows, so the tail read after it is at least that head.
        const uint64_t head = cons_.head.load(std::memory_order_relaxed);
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);
        return static_cast<int64_t>(tail - head < capacity_ ? tail - head : capacity_);
    }

private:
    static constexpr uint64_t kItemsPerLine = detail::kCacheLine / sizeof(T) > 0 ? detail::kCacheLine / sizeof(T) : 1;

    void copy_in(uint64_t at, const T* items, uint32_t n) {
        const uint64_t i0 = at & slot_mask_;
        const uint64_t first = n < slot_mask_ + 1 - i0 ? n : slot_mask_ + 1 - i0;
        T* dst = slots_ + i0;
        for (uint64_t i = 0; i < first; ++i) dst[i] = items[i];
        for (uint64_t i = first; i < n; ++i) slots_[i - first] = items[i];
    }
    void copy_out(uint64_t at, T* items, uint32_t n) const {
        const uint64_t i0 = at & slot_mask_;
        const uint64_t first = n < slot_mask_ + 1 - i0 ? n : slot_mask_ + 1 - i0;
        const T* src = slots_ + i0;
        for (uint64_t i = 0; i < first; ++i) items[i] = src[i];
        for (uint64_t i = first; i < n; ++i) items[i] = slots_[i - first];
    }
    // Only items below tail_cache: those the producer has finished writing.
    void prefetch_next(uint64_t at, uint64_t n) const {
        for (uint64_t k = 0; k < n; k += kItemsPerLine) __builtin_prefetch(&slots_[(at + k) & slot_mask_], 0, 3);
    }

    struct alignas(detail::kNoFalseSharing) Producer {
        std::atomic<uint64_t> tail{0};
        uint64_t head_cache = 0;
    };
    struct alignas(detail::kNoFalseSharing) Consumer {
        std::atomic<uint64_t> head{0};
        uint64_t tail_cache = 0;
    };
    const uint64_t capacity_;
    const uint64_t slot_mask_;
    detail::NodeMemory mem_;
    T* const slots_;
    Producer prod_;
    Consumer cons_;
};

}  // namespace tp
