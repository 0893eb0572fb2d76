// AsymmetricReceiver<T> (the paper's asymmetric interface, `Asymmetric<T>`): N senders, one
// receiver. It is N one-to-one channels of one transport, sender i owning sender(i), plus a
// receive that picks a ready sender.
//
// Selection policy: round-robin scan starting after the last sender served. try_recv takes
// one item from the first sender with an item; try_recv_burst takes, in the same scan order,
// as much as each sender has until the burst is full, and remembers the last sender that gave
// anything. So with every sender always ready each one gets exactly 1/N of the items (of the
// bursts, for bursts no longer than a sender's backlog), and an idle sender costs one
// try_recv per scan (the paper's Fig. 12). Over channels that share one receive side (the
// messaging network's asymmetric interface) a receive polls that side once instead.
//
// Ordering: per-sender FIFO, exactly once; no order between senders. End of stream: closed()
// is true once every sender has closed its channel; a receiver that then finds every channel
// empty has received everything. Thread-safety: each sender(i) has one sender thread; the
// receive side (try_recv*, closed, park_receiver) has one receiver thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/channel/channel.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp {

template <typename T>
class AsymmetricReceiver {
public:
    using value_type = T;
    static constexpr uint32_t kMaxSenders = 256;

    // Builds `senders` channels from `spec`; throws std::invalid_argument for a sender count
    // of 0 or over kMaxSenders, or whatever make_channel rejects in `spec`.
    AsymmetricReceiver(const ChannelSpec& spec, uint32_t senders) {
        if (senders == 0 || senders > kMaxSenders)
            throw std::invalid_argument("asymmetric channel: sender count must be between 1 and " +
                                        std::to_string(kMaxSenders) + ", got " + std::to_string(senders));
        chans_.reserve(senders);
        for (uint32_t i = 0; i < senders; ++i) chans_.push_back(make_channel<T>(spec));
        last_ = senders - 1;  // the first scan starts at sender 0
    }

    // Over channels built elsewhere (a messaging network's links into one tile, a shared
    // locked queue's views). When they all share one receive side (Channel::receive_side),
    // a receive polls that side once, whatever the number of senders: the paper's asymmetric
    // interface. Throws std::invalid_argument for a count of 0 or over kMaxSenders.
    explicit AsymmetricReceiver(std::vector<std::unique_ptr<Channel<T>>> channels) : chans_(std::move(channels)) {
        if (chans_.empty() || chans_.size() > kMaxSenders)
            throw std::invalid_argument("asymmetric channel: sender count must be between 1 and " +
                                        std::to_string(kMaxSenders) + ", got " + std::to_string(chans_.size()));
        shared_ = true;
        for (const auto& c : chans_) shared_ = shared_ && c->receive_side() == chans_[0]->receive_side();
        last_ = senders() - 1;
    }

    uint32_t senders() const { return static_cast<uint32_t>(chans_.size()); }
    Channel<T>& sender(uint32_t i) { return *chans_[i]; }
    const char* transport() const { return chans_[0]->transport(); }

    bool try_recv(T& item) {
        if (shared_) return chans_[0]->try_recv(item);
        const uint32_t n = senders();
        uint32_t i = last_;
        for (uint32_t k = 0; k < n; ++k) {
            i = (i + 1 == n) ? 0 : i + 1;
            if (chans_[i]->try_recv(item)) {
                last_ = i;
                return true;
            }
        }
        return false;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) {
        if (shared_) return chans_[0]->try_recv_burst(items, n);
        const uint32_t senders_n = senders();
        uint32_t got = 0;
        uint32_t i = last_;
        for (uint32_t k = 0; k < senders_n && got < n; ++k) {
            i = (i + 1 == senders_n) ? 0 : i + 1;
            const uint32_t m = chans_[i]->try_recv_burst(items + got, n - got);
            if (m != 0) {
                got += m;
                last_ = i;
            }
        }
        return got;
    }

    // True once every sender closed (acquire on each channel's flag). Senders close in any
    // order, and never reopen, so the scan resumes where it last found an open channel.
    bool closed() {
        while (first_open_ < chans_.size() && chans_[first_open_]->closed()) ++first_open_;
        return first_open_ == chans_.size();
    }

    // The doorbell every channel rings after a send (nullptr: none). Keeps each channel's
    // sender bell; set those with sender(i).set_bells(own_bell, receiver_bell()).
    void set_receiver_bell(Doorbell* bell) {
        rx_bell_ = bell;
        for (auto& c : chans_) c->set_bells(c->sender_bell(), bell);
    }
    Doorbell* receiver_bell() const { return rx_bell_; }

    bool park_receiver(const WaitPolicy& policy, const std::function<bool()>& attempt) {
        // A shared side may sleep its own way (a locked queue's condition variable).
        if (shared_ && rx_bell_ == nullptr) return chans_[0]->park_receiver(policy, attempt);
        return park_on(rx_bell_, policy, attempt);
    }

    uint32_t last_served() const { return last_; }

private:
    std::vector<std::unique_ptr<Channel<T>>> chans_;
    bool shared_ = false;      // every channel pops one receive side: poll it once
    uint32_t last_ = 0;        // receiver-private
    size_t first_open_ = 0;    // receiver-private
    Doorbell* rx_bell_ = nullptr;
};

template <typename T>
using Asymmetric = AsymmetricReceiver<T>;

}  // namespace tp
