// PayloadPool: the buffers a tile's multi-word messages ride in on the event device (an
// event carries one 64-bit word, so a longer payload travels as a pointer to a buffer).
//
// The sending tile's thread takes buffers (take) and the receiving thread gives them back
// (give_back) onto a lock-free stack the owner empties in one exchange when its private
// list runs dry; the pool grows when both are empty, so it ends up as large as the most
// buffers ever in flight at once. Each buffer also carries a ready flag the sender releases
// after writing and the receiver acquires before reading, so the payload is ordered by the
// program's own atomics, not only by the device's rings.
// Thread-safety: take/put_unused on the owner's thread; give_back from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "framework/noc/network_config.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc::detail {

class PayloadPool {
public:
    struct Buffer {
        PayloadPool* owner = nullptr;
        Buffer* next = nullptr;  // link in a free list; owned by whoever holds the buffer
        std::atomic<uint32_t> ready{0};
        uint64_t words[kMaxPayload];
    };

    // Owner: a free buffer.
    Buffer* take() {
        if (local_ == nullptr)
            // acquire: pairs with give_back's release, so the receivers' reads are done.
            local_ = returned_.exchange(nullptr, std::memory_order_acquire);
        if (local_ == nullptr) {
            all_.push_back(std::make_unique<Buffer>());
            all_.back()->owner = this;
            return all_.back().get();
        }
        Buffer* b = local_;
        local_ = b->next;
        return b;
    }

    // Owner: a buffer it took but did not send.
    void put_unused(Buffer* b) {
        b->next = local_;
        local_ = b;
    }

    // Owner, after writing the payload: makes it visible to the receiver's read().
    static void publish(Buffer* b, const uint64_t* payload, uint32_t n) {
        std::memcpy(b->words, payload, sizeof(uint64_t) * n);
        b->ready.store(1, std::memory_order_release);  // the words are written before the flag
    }

    // Receiver: copies the payload out and hands the buffer back to its owner.
    static void read(Buffer* b, uint64_t* payload, uint32_t n) {
        // acquire: pairs with publish's release. The event that carried the pointer was sent
        // after publish, so the flag is already up; the loop only states the dependency.
        while (b->ready.load(std::memory_order_acquire) == 0) cpu_pause();
        std::memcpy(payload, b->words, sizeof(uint64_t) * n);
        b->ready.store(0, std::memory_order_relaxed);  // relaxed: published by give_back's release
        b->owner->give_back(b);
    }

    // Any thread: returns a buffer to the owner (a Treiber-stack push).
    void give_back(Buffer* b) {
        b->next = returned_.load(std::memory_order_relaxed);  // relaxed: the CAS checks it
        // release: the buffer's last reads and writes happen before the owner takes it again.
        while (!returned_.compare_exchange_weak(b->next, b, std::memory_order_release, std::memory_order_relaxed)) {
        }
    }

    size_t allocated() const { return all_.size(); }  // owner's view

private:
    Buffer* local_ = nullptr;  // owner-private free list
    alignas(64) std::atomic<Buffer*> returned_{nullptr};
    std::vector<std::unique_ptr<Buffer>> all_;  // every buffer, freed with the pool
};

}  // namespace tp::noc::detail
