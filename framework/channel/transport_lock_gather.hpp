// locked_gather<T>(capacity, senders): the paper's `lck_queue` gather, one bounded FIFO under
// one POSIX mutex (std::mutex) that N senders share, with condition variables for blocking
// waits: a receiver with nothing to take sleeps on `not_empty`, a sender without room on
// `not_full`, and each side signals only when someone sleeps.
//
// It is handed out as N channels, one per sender, that all pop the same queue
// (Channel::receive_side), so an AsymmetricReceiver over them polls it once. End of stream
// stays per sender: close() wakes a sleeping receiver, which then sees that sender closed.
// Ordering: per-sender FIFO, exactly once. Thread-safety: every call takes the mutex; one
// thread per sender channel, one receiver thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "framework/channel/channel.hpp"
#include "framework/channel/detail/capacity.hpp"

namespace tp {

namespace detail {

template <typename T>
struct LockedQueue {
    explicit LockedQueue(uint32_t capacity) : cap(capacity), slots(capacity) {}
    std::mutex m;
    std::condition_variable not_empty, not_full;
    const uint32_t cap;
    std::vector<T> slots;   // guarded by m, as is everything below
    uint32_t head = 0, count = 0;
    uint32_t rx_waiting = 0, tx_waiting = 0;
    uint64_t closes = 0;    // senders that closed so far
};

template <typename T>
class LockedGatherChannel final : public Channel<T> {
public:
    explicit LockedGatherChannel(std::shared_ptr<LockedQueue<T>> q) : q_(std::move(q)) {}

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        LockedQueue<T>& q = *q_;
        bool wake = false;
        {
            std::lock_guard<std::mutex> lk(q.m);
            if (n > q.cap - q.count) n = q.cap - q.count;
            for (uint32_t i = 0; i < n; ++i) q.slots[(q.head + q.count + i) % q.cap] = items[i];
            q.count += n;
            wake = n != 0 && q.rx_waiting != 0;
        }
        if (wake) q.not_empty.notify_one();
        if (n != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        return n;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        LockedQueue<T>& q = *q_;
        bool wake = false;
        {
            std::lock_guard<std::mutex> lk(q.m);
            if (n > q.count) n = q.count;
            for (uint32_t i = 0; i < n; ++i) items[i] = q.slots[(q.head + i) % q.cap];
            q.head = (q.head + n) % q.cap;
            q.count -= n;
            wake = n != 0 && q.tx_waiting != 0;
        }
        if (wake) q.not_full.notify_all();  // several senders may wait for room
        return n;
    }

    uint32_t capacity() const override { return q_->cap; }
    const char* transport() const override { return "lock"; }
    const void* receive_side() const override { return q_.get(); }

    // Sleeps until an item is there or a sender closed (or the policy's timeout).
    bool park_receiver(const WaitPolicy& policy, const std::function<bool()>& attempt) override {
        LockedQueue<T>& q = *q_;
        {
            std::unique_lock<std::mutex> lk(q.m);
            const uint64_t closes = q.closes;
            ++q.rx_waiting;
            q.not_empty.wait_for(lk, policy.park_timeout, [&] { return q.count != 0 || q.closes != closes; });
            --q.rx_waiting;
        }
        return attempt();
    }

    // Sleeps until there is room (or the timeout).
    bool park_sender(const WaitPolicy& policy, const std::function<bool()>& attempt) override {
        LockedQueue<T>& q = *q_;
        {
            std::unique_lock<std::mutex> lk(q.m);
            ++q.tx_waiting;
            q.not_full.wait_for(lk, policy.park_timeout, [&] { return q.count != q.cap; });
            --q.tx_waiting;
        }
        return attempt();
    }

protected:
    void on_close() override {
        {
            // Under the mutex: a receiver is either before its predicate check (and sees the
            // count of closes change) or waiting (and gets the notify).
            std::lock_guard<std::mutex> lk(q_->m);
            ++q_->closes;
        }
        q_->not_empty.notify_all();
    }

private:
    std::shared_ptr<LockedQueue<T>> q_;
};

}  // namespace detail

// `senders` channels over one locked queue of `capacity` items. Throws std::invalid_argument
// for a capacity of 0 (or over the limit).
template <typename T>
std::vector<std::unique_ptr<Channel<T>>> locked_gather(uint32_t capacity, uint32_t senders) {
    auto q = std::make_shared<detail::LockedQueue<T>>(detail::checked_capacity("lock", capacity, false));
    std::vector<std::unique_ptr<Channel<T>>> out;
    for (uint32_t i = 0; i < senders; ++i) out.push_back(std::make_unique<detail::LockedGatherChannel<T>>(q));
    return out;
}

}  // namespace tp
