// FastFlow's single-producer single-consumer buffer (ff::SWSR_Ptr_Buffer) holding 64-bit
// words, behind the try_* calls the benches drive a queue with. A word w travels as the pointer
// value w + 1 (the buffer reserves null for "empty"; so UINT64_MAX cannot travel, and the
// benches send item numbers far below it). A burst is a loop of push and of pop: the
// buffer has no batch pop, and its multipush (marked experimental in its source) advances the
// write index past the batch's end when it does not start at slot 0, so a stream through it
// stops.
// Only for bench programs built beside FastFlow's headers (apps/bench/meson.build).
// Ordering: FIFO, exactly once. Thread-safety: one sender thread, one receiver thread.
#pragma once

#include <ff/buffer.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "apps/bench/item_bursts.hpp"

namespace tp::bench {

class FastFlowSwsr : public ItemBursts<FastFlowSwsr, uint64_t> {
public:
    explicit FastFlowSwsr(uint32_t capacity) : buf_(capacity), capacity_(capacity) {
        if (capacity == 0 || !buf_.init())
            throw std::invalid_argument("fastflow buffer: cannot make one of " + std::to_string(capacity) + " slots");
    }
    bool try_send(const uint64_t& item) { return buf_.push(to_pointer(item)); }
    bool try_recv(uint64_t& item) {
        void* p = nullptr;
        if (!buf_.pop(&p)) return false;
        item = reinterpret_cast<uint64_t>(p) - 1;
        return true;
    }
    uint32_t capacity() const { return capacity_; }

private:
    static void* to_pointer(uint64_t w) { return reinterpret_cast<void*>(w + 1); }

    ff::SWSR_Ptr_Buffer buf_;
    const uint32_t capacity_;
};

}  // namespace tp::bench
