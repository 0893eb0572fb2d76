// SmChannel<T, Layout>: the paper's shared-memory communication interface (Buono & Mencagli,
// TILEPro64), transport `sm`, with asynchrony degree K.
//
// K slots used round-robin. Each slot has a ready flag and a message written only by the
// sender, and an ack flag written only by the receiver. In the default layout (SmSplitLayout,
// this file) {ready, msg} share one cache line and {ack} sits on another, so each line has a
// single writer; `sm_shared` (transport_sm_shared.hpp) puts all three on one line.
//
// The flags carry sequence numbers instead of booleans, so neither side ever clears the
// other's flag: message number s goes to slot s mod K with ready = s + 1; the receiver
// consumes it when ready == s + 1 and acknowledges with ack = s + 1; the sender may reuse the
// slot for message s + K once an ack shows message s consumed. Because the receiver consumes
// in order, the sender reads the ack of the last message it sent first (one line read frees
// every slot when the receiver keeps up) and the ack of the slot it needs only when that is
// not enough; see refresh_limit. A slot holds the whole item (one word, or a 16-byte
// PacketDesc) as its message.
//
// Memory: the slots are allocated on the receiver's NUMA node (NodeMemory). The paper homes
// the ack lines at the sender; ChannelSpec names only the receiver's node, so both live there.
// Ordering: FIFO, exactly once. Thread-safety: one sender thread, one receiver thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "framework/channel/channel.hpp"
#include "framework/channel/detail/cache_line.hpp"
#include "framework/channel/detail/capacity.hpp"
#include "framework/channel/detail/node_memory.hpp"

namespace tp {

// Split layout: K lines {ready, msg} written by the sender, K lines {ack} written by the receiver.
template <typename T>
class SmSplitLayout {
public:
    static constexpr const char* kName = "sm";

    SmSplitLayout(uint32_t k, int socket)
        : data_mem_(sizeof(DataLine) * k, socket), ack_mem_(sizeof(AckLine) * k, socket) {
        data_ = static_cast<DataLine*>(data_mem_.get());
        acks_ = static_cast<AckLine*>(ack_mem_.get());
        for (uint32_t i = 0; i < k; ++i) new (&data_[i]) DataLine{};
        for (uint32_t i = 0; i < k; ++i) new (&acks_[i]) AckLine{};
    }

    std::atomic<uint64_t>& ready(uint32_t i) { return data_[i].ready; }
    T& msg(uint32_t i) { return data_[i].msg; }
    std::atomic<uint64_t>& ack(uint32_t i) { return acks_[i].ack; }
    const std::atomic<uint64_t>& ready(uint32_t i) const { return data_[i].ready; }
    const std::atomic<uint64_t>& ack(uint32_t i) const { return acks_[i].ack; }

private:
    struct alignas(detail::kCacheLine) DataLine {
        std::atomic<uint64_t> ready{0};
        T msg{};
    };
    struct alignas(detail::kCacheLine) AckLine {
        std::atomic<uint64_t> ack{0};
    };
    static_assert(sizeof(DataLine) == detail::kCacheLine, "{ready, msg} must fit one cache line");

    detail::NodeMemory data_mem_;
    detail::NodeMemory ack_mem_;
    DataLine* data_;
    AckLine* acks_;
};

template <typename T, typename Layout = SmSplitLayout<T>>
class SmChannel final : public Channel<T> {
public:
    explicit SmChannel(uint32_t k, int socket = -1)
        : k_(detail::checked_capacity(Layout::kName, k, true)), mask_(k - 1), slots_(k, socket) {
        tx_.limit = k_;  // every slot starts free
    }

    bool try_send(const T& item) override { return try_send_burst(&item, 1) == 1; }
    bool try_recv(T& item) override { return try_recv_burst(&item, 1) == 1; }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        uint64_t seq = tx_.seq;
        if (tx_.limit - seq < n) refresh_limit(seq, n);
        if (tx_.limit - seq < n) n = static_cast<uint32_t>(tx_.limit - seq);
        for (uint32_t i = 0; i < n; ++i, ++seq) {
            const uint32_t s = static_cast<uint32_t>(seq) & mask_;
            slots_.msg(s) = items[i];
            // release: msg is visible to a receiver that reads ready == seq + 1 with acquire.
            slots_.ready(s).store(seq + 1, std::memory_order_release);
        }
        tx_.seq = seq;
        if (n != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        return n;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        uint64_t seq = rx_.seq;
        uint32_t i = 0;
        for (; i < n; ++i, ++seq) {
            const uint32_t s = static_cast<uint32_t>(seq) & mask_;
            // acquire: pairs with the sender's release of ready, so msg is the message seq.
            if (slots_.ready(s).load(std::memory_order_acquire) != seq + 1) break;
            items[i] = slots_.msg(s);
            // release: our read of msg happens before the sender's reuse of the slot.
            slots_.ack(s).store(seq + 1, std::memory_order_release);
        }
        rx_.seq = seq;
        if (i != 0)
            if (Doorbell* b = this->sender_bell()) b->ring();
        return i;
    }

    uint32_t capacity() const override { return k_; }
    const char* transport() const override { return Layout::kName; }
    // A slot holds a message when its ready number is ahead of its ack number (one pass over
    // the K slots, relaxed loads; the sender's and receiver's sequence numbers are private).
    int64_t queued() const override {
        int64_t n = 0;
        for (uint32_t s = 0; s < k_; ++s)
            n += slots_.ready(s).load(std::memory_order_relaxed) > slots_.ack(s).load(std::memory_order_relaxed);
        return n;
    }

private:
    // Sender: reads acks to learn which messages may be written. The receiver consumes in
    // order, so ack == m + 1 in any slot means every message up to m was consumed and message
    // m + K may reuse its slot: `limit` = m + 1 + K bounds the messages with a free slot.
    // The ack of the last message sent (slot seq - 1) frees all K slots at once when the
    // receiver keeps up, so a sender that is not ahead reads one ack line per K messages, and
    // the receiver's ack stores find their lines still in its own cache. When the receiver is
    // behind, the sender tests the ack of each slot it needs next, as the paper's sender does,
    // until the burst fits or a slot is still taken.
    void refresh_limit(uint64_t seq, uint32_t n) {
        // acquire (every ack load): pairs with the receiver's release of ack, so its reads of
        // the msgs of every message up to m are complete before we overwrite them.
        const uint64_t recent = slots_.ack(static_cast<uint32_t>(seq - 1) & mask_).load(std::memory_order_acquire);
        if (recent + k_ > tx_.limit) tx_.limit = recent + k_;
        while (tx_.limit - seq < n) {
            // The slot of message `limit` is free once message limit - K was consumed.
            const uint64_t acked = slots_.ack(static_cast<uint32_t>(tx_.limit) & mask_).load(std::memory_order_acquire);
            if (acked + k_ <= tx_.limit) break;
            tx_.limit = acked + k_;
        }
    }

    struct alignas(detail::kNoFalseSharing) Sender {
        uint64_t seq = 0;    // next message number
        uint64_t limit = 0;  // messages below this number have a free slot
    };
    struct alignas(detail::kNoFalseSharing) Receiver {
        uint64_t seq = 0;  // next message number
    };
    const uint32_t k_;
    const uint32_t mask_;
    Layout slots_;
    Sender tx_;
    Receiver rx_;
};

}  // namespace tp
