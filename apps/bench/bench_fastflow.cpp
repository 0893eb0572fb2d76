// FastFlow's single-producer single-consumer buffer (ff::SWSR_Ptr_Buffer) as a word channel,
// for `tilepipe-bench mapvec`'s fastflow_tree variant: the study's FastFlow column with
// FastFlow's own queue. Compiled only into tilepipe-bench, from the headers beside the
// repository (apps/bench/meson.build).
//
// A reference r travels as the pointer value r + 1 (FastFlow's buffer reserves null for
// "empty"). Ordering: FIFO, exactly once (FastFlow's guarantee for one producer and one
// consumer). Thread-safety: one sender thread, one receiver thread.
#include <ff/buffer.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "apps/bench/peer_channels.hpp"

namespace tp::bench {
namespace {

class FastFlowChannel final : public Channel<uint64_t> {
public:
    explicit FastFlowChannel(uint32_t capacity) : buf_(capacity), capacity_(capacity) {
        if (capacity == 0 || !buf_.init())
            throw std::invalid_argument("fastflow channel: cannot make a buffer of " + std::to_string(capacity) + " slots");
    }

    bool try_send(const uint64_t& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(uint64_t& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const uint64_t* items, uint32_t n) override {
        uint32_t i = 0;
        while (i < n && buf_.push(reinterpret_cast<void*>(items[i] + 1))) ++i;
        if (i != 0)
            if (Doorbell* b = receiver_bell()) b->ring();
        return i;
    }

    uint32_t try_recv_burst(uint64_t* items, uint32_t n) override {
        uint32_t i = 0;
        void* p = nullptr;
        while (i < n && buf_.pop(&p)) items[i++] = reinterpret_cast<uint64_t>(p) - 1;
        if (i != 0)
            if (Doorbell* b = sender_bell()) b->ring();
        return i;
    }

    uint32_t capacity() const override { return capacity_; }
    const char* transport() const override { return "fastflow"; }

private:
    ff::SWSR_Ptr_Buffer buf_;
    const uint32_t capacity_;
};

std::unique_ptr<Channel<uint64_t>> make_fastflow(uint32_t capacity) { return std::make_unique<FastFlowChannel>(capacity); }

// Registered before main: this file is linked into tilepipe-bench only.
const bool registered = (fastflow_channel() = &make_fastflow, true);

}  // namespace
}  // namespace tp::bench
