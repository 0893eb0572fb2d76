// LockChannel<T>: transport `lock`, a bounded FIFO guarded by one mutex, with two condition
// variables for sleeping senders and receivers (the paper's `lck_queue` baseline).
//
// try_send/try_recv take the mutex for a few instructions and never wait for room or items;
// a blocking send/recv (blocking.hpp) parks on the condition variables, which the other side
// signals only when someone is waiting. Doorbells, when set, are rung too, so a runtime
// thread parked on its own doorbell wakes as with any transport.
// Ordering: FIFO, exactly once. Thread-safety: any thread may call anything, but the Channel
// contract (one sender, one receiver) is what the tests and the runtime rely on.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "framework/channel/channel.hpp"
#include "framework/channel/detail/capacity.hpp"

namespace tp {

template <typename T>
class LockChannel final : public Channel<T> {
public:
    explicit LockChannel(uint32_t capacity)
        : cap_(detail::checked_capacity("lock", capacity, false)), slots_(new T[capacity]) {}

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        bool wake = false;
        {
            std::lock_guard<std::mutex> lk(m_);
            if (n > cap_ - count_) n = cap_ - count_;
            for (uint32_t i = 0; i < n; ++i) slots_[(head_ + count_ + i) % cap_] = items[i];
            count_ += n;
            count_seen_.store(count_, std::memory_order_relaxed);
            wake = n != 0 && rx_waiting_ != 0;
        }
        if (wake) not_empty_.notify_one();
        if (n != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        return n;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        bool wake = false;
        {
            std::lock_guard<std::mutex> lk(m_);
            if (n > count_) n = count_;
            for (uint32_t i = 0; i < n; ++i) items[i] = slots_[(head_ + i) % cap_];
            head_ = (head_ + n) % cap_;
            count_ -= n;
            count_seen_.store(count_, std::memory_order_relaxed);
            wake = n != 0 && tx_waiting_ != 0;
        }
        if (wake) not_full_.notify_one();
        if (n != 0)
            if (Doorbell* b = this->sender_bell()) b->ring();
        return n;
    }

    uint32_t capacity() const override { return cap_; }
    const char* transport() const override { return "lock"; }
    // A copy of the count kept for readers outside the two ends, who must not take the mutex.
    int64_t queued() const override { return count_seen_.load(std::memory_order_relaxed); }

    // Sleep on the condition variable until an item or end of stream (or the timeout).
    bool park_receiver(const WaitPolicy& policy, const std::function<bool()>& attempt) override {
        {
            std::unique_lock<std::mutex> lk(m_);
            ++rx_waiting_;
            not_empty_.wait_for(lk, policy.park_timeout, [&] { return count_ != 0 || this->closed(); });
            --rx_waiting_;
        }
        return attempt();
    }

    // Sleep on the condition variable until there is room (or the timeout).
    bool park_sender(const WaitPolicy& policy, const std::function<bool()>& attempt) override {
        {
            std::unique_lock<std::mutex> lk(m_);
            ++tx_waiting_;
            not_full_.wait_for(lk, policy.park_timeout, [&] { return count_ != cap_; });
            --tx_waiting_;
        }
        return attempt();
    }

protected:
    void on_close() override {
        // Taking the mutex orders this after a receiver's predicate check: it is either not
        // yet checking (and will see closed()) or already waiting (and gets the notify).
        { std::lock_guard<std::mutex> lk(m_); }
        not_empty_.notify_all();
    }

private:
    const uint32_t cap_;
    std::unique_ptr<T[]> slots_;
    std::mutex m_;
    std::condition_variable not_empty_;
    std::condition_variable not_full_;
    uint32_t head_ = 0;   // guarded by m_
    uint32_t count_ = 0;  // guarded by m_
    std::atomic<uint32_t> count_seen_{0};  // count_, for queued()
    uint32_t rx_waiting_ = 0;
    uint32_t tx_waiting_ = 0;
};

}  // namespace tp
