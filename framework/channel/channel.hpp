// Channel<T>: a point-to-point communication interface between two tiles (one sender, one
// receiver), the runtime's only way to move descriptors or words between tiles.
//
// Transports differ in mechanism (see framework/channel/transport_*.hpp) but share this
// contract:
//  - try_send / try_recv and their burst variants never block; a burst call moves a prefix of
//    the items and returns how many.
//  - Items arrive exactly once and in send order.
//  - End of stream travels out of band: the sender calls close() after its last send; the
//    receiver sees `closed()` and then drains whatever is left. close() is a release store
//    made after the last send, so a receiver that observed closed() (acquire) and then finds
//    the channel empty has received everything.
//  - Optional doorbells wake a parked receiver after a send and a parked sender after a
//    receive frees room.
//  - Blocking send/recv (framework/channel/blocking.hpp) are built on the try_* calls plus a
//    WaitPolicy; its park phase calls park_receiver/park_sender, which sleep on the doorbells
//    (a transport with its own sleeping mechanism, like `lock`, overrides them).
//  - Thread-safety: one sender thread and one receiver thread at a time; close() belongs to
//    the sender.
// One virtual call per burst is the price of choosing the transport per link at run time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp {

template <typename T>
class Channel {
public:
    using value_type = T;

    virtual ~Channel() = default;

    virtual bool try_send(const T& item) = 0;
    virtual bool try_recv(T& item) = 0;
    virtual uint32_t try_send_burst(const T* items, uint32_t n) = 0;
    virtual uint32_t try_recv_burst(T* items, uint32_t n) = 0;
    virtual uint32_t capacity() const = 0;
    virtual const char* transport() const = 0;
    // Items in the channel now, as seen from a third thread (live telemetry) with relaxed
    // loads: possibly a burst out of date, never blocking either end. -1: the transport cannot
    // tell without taking a side's private state.
    virtual int64_t queued() const { return -1; }
    // What a receive pops: this channel, or a queue it shares with other channels into the
    // same receiver (a messaging network's asymmetric interface, a shared locked queue), in
    // which case a receive on any of them may return another's item and polling one of them
    // polls them all (AsymmetricReceiver does).
    virtual const void* receive_side() const { return this; }

    void close() {
        closed_.store(true, std::memory_order_release);  // after every send of this sender
        if (rx_bell_ != nullptr) rx_bell_->ring();
        on_close();
    }
    // acquire: pairs with close()'s release, so a receiver that sees `closed` and then finds
    // the channel empty has seen every item sent before the close.
    bool closed() const { return closed_.load(std::memory_order_acquire); }

    void set_bells(Doorbell* sender, Doorbell* receiver) {
        tx_bell_ = sender;
        rx_bell_ = receiver;
    }
    Doorbell* sender_bell() const { return tx_bell_; }
    Doorbell* receiver_bell() const { return rx_bell_; }

    // Park phase of a blocking recv/send (see WaitPolicy): sleep until the other side made
    // progress or the policy's timeout; `attempt` is the re-check made after announcing the
    // sleep. Returns true when that re-check succeeded.
    virtual bool park_receiver(const WaitPolicy& policy, const std::function<bool()>& attempt) {
        return park_on(rx_bell_, policy, attempt);
    }
    virtual bool park_sender(const WaitPolicy& policy, const std::function<bool()>& attempt) {
        return park_on(tx_bell_, policy, attempt);
    }

protected:
    // Called by close() after the end of stream is published and the doorbell rung.
    virtual void on_close() {}

private:
    alignas(64) std::atomic<bool> closed_{false};
    Doorbell* tx_bell_ = nullptr;
    Doorbell* rx_bell_ = nullptr;
};

}  // namespace tp
