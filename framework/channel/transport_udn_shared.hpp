// SharedUdnChannel<T, Net>: transport `udn` (and `udn_eventdev`) inside an app: one link of
// the app's messaging network (framework/graph/app_network.hpp builds them). Its sending end
// is a CreditSender of the sender's tile; its receiving end is the receive interface of the
// receiver's tile that the link belongs to (UdnReceiveSide), shared by every link of the same
// kind into that tile: one CreditReceiver popping one queue, the asymmetric interface when
// there are several senders.
//
// A receive on any of the links of a side pops the side's queue, so it may return an item
// another link of the side sent: every item is still received exactly once, in its sender's
// order, by the one thread that drives the receiving tile (what its task needs: a collector
// gathers, it does not care which input an item came through). End of stream stays per
// link: close() publishes after the sender's last send, so a receiver that saw a link closed
// and then found the side's queue empty has every item of that link.
// Thread-safety: try_send/close on the sender tile's thread, try_recv on the receiver's.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "framework/channel/channel.hpp"
#include "framework/channel/transport_udn_burst.hpp"
#include "framework/noc/credit_receiver.hpp"
#include "framework/noc/credit_sender.hpp"

namespace tp {

template <typename T, typename Net>
class SharedUdnChannel;

// The receive interface a tile's links of one kind share, and the doorbells of their senders:
// a receive wakes only the senders it returned credits to (CreditReceiver::take_credited),
// behind one fence for all of them, so its cost does not grow with idle senders.
template <typename T, typename Net>
class UdnReceiveSide {
public:
    explicit UdnReceiveSide(noc::CreditReceiver<Net>& rx) : rx_(rx) {}
    UdnReceiveSide(const UdnReceiveSide&) = delete;
    UdnReceiveSide& operator=(const UdnReceiveSide&) = delete;

    void add(const SharedUdnChannel<T, Net>* link) { links_.push_back(link); }
    noc::CreditReceiver<Net>& receiver() { return rx_; }

    // After a receive: rings the doorbell of each sender credited since the last call.
    void ring_credited() {
        if (!bells_known_) {  // the links got their doorbells before the tiles started
            for (const auto* l : links_) {
                const noc::TileId t = l->sender_tile();
                if (t >= bell_of_.size()) bell_of_.resize(t + 1, nullptr);
                bell_of_[t] = l->sender_bell();
            }
            bells_known_ = true;
        }
        bool fenced = false;
        rx_.take_credited([&](noc::TileId t) {
            Doorbell* b = t < bell_of_.size() ? bell_of_[t] : nullptr;
            if (b == nullptr) return;
            if (!fenced) {
                // The credits pushed (release stores) before any sender's `parked` flag is
                // read: the producer half of the doorbell's Dekker pattern, once per receive.
                std::atomic_thread_fence(std::memory_order_seq_cst);
                fenced = true;
            }
            b->ring_fenced();
        });
    }

private:
    noc::CreditReceiver<Net>& rx_;
    std::vector<const SharedUdnChannel<T, Net>*> links_;
    std::vector<Doorbell*> bell_of_;  // per sender tile, gathered on first use
    bool bells_known_ = false;
};

template <typename T, typename Net>
class SharedUdnChannel final : public Channel<T> {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 8 == 0, "an item travels as whole 64-bit words");

public:
    static constexpr uint32_t kWords = sizeof(T) / 8;

    SharedUdnChannel(noc::CreditSender<Net>& tx, UdnReceiveSide<T, Net>& rx, uint32_t credits, const char* name)
        : tx_(tx), rx_(rx), credits_(credits), name_(name) {
        rx_.add(this);
    }

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        const uint32_t i = detail::udn_send_burst(tx_, items, n);
        // ring_light: no fence per send where the receiver's doorbell takes the ordering on
        // itself (Doorbell::make_light); a plain ring otherwise.
        if (i != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring_light();
        detail::udn_retry_if_refused(tx_, i, n, this->sender_bell());
        return i;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        const uint32_t got = detail::udn_recv_burst(rx_.receiver(), items, n);
        rx_.ring_credited();  // also after nothing came: a repayment may have credited someone
        detail::udn_retry_if_owing(rx_.receiver(), this->receiver_bell());
        return got;
    }

    uint32_t capacity() const override { return credits_; }
    const char* transport() const override { return name_; }
    const void* receive_side() const override { return &rx_; }
    noc::TileId sender_tile() const { return tx_.tile(); }

private:
    noc::CreditSender<Net>& tx_;
    UdnReceiveSide<T, Net>& rx_;
    const uint32_t credits_;
    const char* name_;
};

}  // namespace tp
