// FastFlow's single-producer single-consumer buffer (fastflow_swsr.hpp) for the benches that
// compare against it: as a word channel for `tilepipe-bench mapvec`'s fastflow_tree variant
// (the study's FastFlow column with FastFlow's own queue), and as `bench stream`'s `fastflow`
// peer. Compiled only into tilepipe-bench, from the headers beside the repository
// (apps/bench/meson.build). Ordering: FIFO, exactly once (FastFlow's guarantee for one producer
// and one consumer). Thread-safety: one sender thread, one receiver thread.
#include <cstdint>
#include <memory>

#include "apps/bench/fastflow_swsr.hpp"
#include "apps/bench/peer_channels.hpp"
#include "apps/bench/stream_measure.hpp"

namespace tp::bench {
namespace {

class FastFlowChannel final : public Channel<uint64_t> {
public:
    explicit FastFlowChannel(uint32_t capacity) : buf_(capacity) {}

    bool try_send(const uint64_t& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(uint64_t& item) override { return try_recv_burst(&item, 1) == 1; }

    // One push at a time: a map's references travel one by one, as in the study.
    uint32_t try_send_burst(const uint64_t* items, uint32_t n) override {
        uint32_t i = 0;
        while (i < n && buf_.try_send(items[i])) ++i;
        if (i != 0)
            if (Doorbell* b = receiver_bell()) b->ring();
        return i;
    }

    uint32_t try_recv_burst(uint64_t* items, uint32_t n) override {
        const uint32_t i = buf_.try_recv_burst(items, n);
        if (i != 0)
            if (Doorbell* b = sender_bell()) b->ring();
        return i;
    }

    uint32_t capacity() const override { return buf_.capacity(); }
    const char* transport() const override { return "fastflow"; }

private:
    FastFlowSwsr buf_;
};

std::unique_ptr<Channel<uint64_t>> make_fastflow(uint32_t capacity) { return std::make_unique<FastFlowChannel>(capacity); }

// Registered before main: this file is linked into tilepipe-bench only.
const bool registered = (fastflow_channel() = &make_fastflow, fastflow_stream() = &measure_stream<uint64_t, FastFlowSwsr>, true);

}  // namespace
}  // namespace tp::bench
