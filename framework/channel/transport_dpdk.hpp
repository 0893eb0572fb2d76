// DpdkRingChannel<T>: transport `dpdk`, DPDK's rte_ring in single-producer/single-consumer
// mode, the ecosystem's standard queue, kept as a peer in every benchmark.
//
// The ring holds the items themselves (rte_ring's element API, element size sizeof(T)), is
// created with RING_F_EXACT_SZ so that it holds exactly `capacity` items, and is allocated by
// DPDK on the receiver's NUMA node. Needs DPDK EAL running (eal_start); the constructor throws
// std::invalid_argument otherwise. Ordering: FIFO, exactly once. Thread-safety: one sender
// thread, one receiver thread (the SP/SC fast path takes no lock and no atomic RMW).
#pragma once

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include <cstdint>

#include "framework/channel/channel.hpp"
#include "descriptors/tsan_sync.hpp"

namespace tp {

namespace detail {
// rte_ring_create_elem with a process-unique name; throws std::invalid_argument on bad input
// or when EAL is not running, std::runtime_error when DPDK has no memory for it.
rte_ring* dpdk_ring_create(uint32_t elem_size, uint32_t capacity, int socket);
void dpdk_ring_free(rte_ring* r);
}  // namespace detail

template <typename T>
class DpdkRingChannel final : public Channel<T> {
    static_assert(sizeof(T) % 4 == 0, "rte_ring elements are a multiple of 4 bytes");

public:
    explicit DpdkRingChannel(uint32_t capacity, int socket = -1)
        : ring_(detail::dpdk_ring_create(sizeof(T), capacity, socket)), capacity_(capacity) {}
    ~DpdkRingChannel() override { detail::dpdk_ring_free(ring_); }
    DpdkRingChannel(const DpdkRingChannel&) = delete;
    DpdkRingChannel& operator=(const DpdkRingChannel&) = delete;

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        // rte_ring orders the slot writes before the tail update (its own barriers).
        tsan_release(ring_);  // rte_ring's ordering is invisible to TSan
        n = rte_ring_sp_enqueue_burst_elem(ring_, items, sizeof(T), n, nullptr);
        if (n != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        return n;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        n = rte_ring_sc_dequeue_burst_elem(ring_, items, sizeof(T), n, nullptr);
        if (n != 0) {
            tsan_acquire(ring_);
            if (Doorbell* b = this->sender_bell()) b->ring();
        }
        return n;
    }

    uint32_t capacity() const override { return capacity_; }
    const char* transport() const override { return "dpdk"; }
    // rte_ring's own count: two index loads, no lock.
    int64_t queued() const override { return rte_ring_count(ring_); }

private:
    rte_ring* const ring_;
    const uint32_t capacity_;
};

}  // namespace tp
