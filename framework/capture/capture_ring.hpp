// CaptureRing<T>: the bounded queue between a capture's reader thread and the source that
// replays it: single producer, single consumer, lock-free, FIFO, exactly once.
//
// Unlike a channel, the consumer looks before it takes: it plans a burst over the items at the
// front (which are due, how many app mbufs they need), then consumes as many as it sent. So
// there is `front(k)` and `consume(n)` instead of a receive that copies.
//
// Memory orders. The producer writes a slot, then publishes it by storing `tail` with release;
// the consumer loads `tail` with acquire before reading slots below it, so a slot's contents
// (and the template bytes the item points to, written before the push) are visible to it. The
// consumer stores `head` with release once it has finished with slots below it; the producer
// loads `head` with acquire before reusing them, so it never overwrites a slot still being
// read. Each side keeps a private copy of the other's index and reloads it only when that copy
// says the ring looks full (producer) or shorter than wanted (consumer). The two sides' lines
// are apart, so they do not share a cache line.
//
// Thread-safety: one producer thread, one consumer thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace tp {

template <typename T>
class CaptureRing {
public:
    explicit CaptureRing(uint32_t capacity) : mask_(capacity - 1), slots_(capacity) {
        if (capacity == 0 || (capacity & (capacity - 1)) != 0)
            throw std::invalid_argument("capture ring capacity must be a power of two");
    }

    // Producer: appends `item`; false when the ring is full.
    bool try_push(const T& item) {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // only we write it
        if (tail - prod_.head_cache > mask_) {
            // acquire: the consumer finished with the slot before it published `head`.
            prod_.head_cache = cons_.head.load(std::memory_order_acquire);
            if (tail - prod_.head_cache > mask_) return false;
        }
        slots_[tail & mask_] = item;
        prod_.tail.store(tail + 1, std::memory_order_release);  // slot written before it is published
        return true;
    }

    // Consumer: items at the front that may be read now; looks at the producer's index only
    // when fewer than `want` are known.
    uint32_t readable(uint32_t want) {
        const uint64_t head = cons_.head.load(std::memory_order_relaxed);  // only we write it
        if (cons_.tail_cache - head < want)
            cons_.tail_cache = prod_.tail.load(std::memory_order_acquire);  // slots below it are visible
        const uint64_t n = cons_.tail_cache - head;
        return static_cast<uint32_t>(n < want ? n : want);
    }

    // Consumer: the k-th item at the front, k < readable().
    const T& front(uint32_t k) const {
        return slots_[(cons_.head.load(std::memory_order_relaxed) + k) & mask_];
    }

    // Consumer: drops the first `n` readable items (the caller is done with them).
    void consume(uint32_t n) {
        const uint64_t head = cons_.head.load(std::memory_order_relaxed);
        cons_.head.store(head + n, std::memory_order_release);  // slots read before they are reused
    }

    uint32_t capacity() const { return static_cast<uint32_t>(mask_ + 1); }

private:
    struct alignas(64) Producer {
        std::atomic<uint64_t> tail{0};  // next slot to write
        uint64_t head_cache = 0;        // the consumer's head, as last seen
    };
    struct alignas(64) Consumer {
        std::atomic<uint64_t> head{0};  // next slot to read
        uint64_t tail_cache = 0;        // the producer's tail, as last seen
    };

    const uint64_t mask_;
    std::vector<T> slots_;
    Producer prod_;
    Consumer cons_;
};

}  // namespace tp
