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
// in order, an ack of message m proves every message up to m consumed, so the receiver
// acknowledges in groups: the last message of each group of G (G = 8, or K/2 for a smaller
// K) and the last message of each burst it takes. A burst of 32 writes 4-5 ack lines
// instead of 32 (the paper acknowledges every message, which costs a line transfer per
// message on top of the message's own). The sender reads the ack of the last message it sent
// first (one line read frees every slot when the receiver keeps up), and otherwise the ack
// of the group end at or after the message whose slot it needs; see refresh_limit. A slot
// holds the whole item (one word, or a 16-byte PacketDesc) as its message.
//
// Memory: the slots are allocated on the receiver's NUMA node (NodeMemory). The paper homes
// the ack lines at the sender; ChannelSpec names only the receiver's node, so both live there.
// Ordering: FIFO, exactly once. Thread-safety: one sender thread, one receiver thread.
#pragma once

#include <algorithm>
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
        : k_(detail::checked_capacity(Layout::kName, k, true)), mask_(k - 1), group_mask_(std::max<uint32_t>(1, std::min<uint32_t>(8, k / 2)) - 1),
          slots_(k, socket) {
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
            // release: our reads of the msgs of every message up to seq happen before the
            // sender's reuse of their slots (it acquires this ack).
            if ((seq & group_mask_) == group_mask_) slots_.ack(s).store(seq + 1, std::memory_order_release);
        }
        rx_.seq = seq;
        if (i != 0) {
            // The burst's last message, unless its group's end acknowledged it already.
            if (((seq - 1) & group_mask_) != group_mask_)
                slots_.ack(static_cast<uint32_t>(seq - 1) & mask_).store(seq, std::memory_order_release);
            if (Doorbell* b = this->sender_bell()) b->ring();
        }
        return i;
    }

    uint32_t capacity() const override { return k_; }
    const char* transport() const override { return Layout::kName; }
    // The newest ready number less the newest ack (one pass over the K slots, relaxed loads;
    // the sender's and receiver's sequence numbers are private): the receiver acknowledges the
    // last message of every burst it takes, so the newest ack is where it stands.
    int64_t queued() const override {
        uint64_t sent = 0, taken = 0;
        for (uint32_t s = 0; s < k_; ++s) {
            sent = std::max(sent, slots_.ready(s).load(std::memory_order_relaxed));
            taken = std::max(taken, slots_.ack(s).load(std::memory_order_relaxed));
        }
        return sent > taken ? static_cast<int64_t>(sent - taken) : 0;
    }

private:
    // Sender: reads acks to learn which messages may be written. The receiver consumes in
    // order, so ack == m + 1 in any slot means every message up to m was consumed and message
    // m + K may reuse its slot: `limit` = m + 1 + K bounds the messages with a free slot.
    // The ack of the last message sent (slot seq - 1) frees all K slots at once when the
    // receiver keeps up, so a sender that is not ahead reads one ack line per K messages, and
    // the receiver's ack stores find their lines still in its own cache. When the receiver is
    // behind, the sender tests the ack of the group end at or after message limit - K (whose
    // slot message `limit` needs), as the paper's sender tests each slot, until the burst fits
    // or that message is not yet consumed. An ack there from the lap before (a group end not
    // yet reached) is at most limit - 2K + G, which frees nothing: G <= K/2.
    void refresh_limit(uint64_t seq, uint32_t n) {
        // acquire (every ack load): pairs with the receiver's release of ack, so its reads of
        // the msgs of every message up to m are complete before we overwrite them.
        const uint64_t recent = slots_.ack(static_cast<uint32_t>(seq - 1) & mask_).load(std::memory_order_acquire);
        if (recent + k_ > tx_.limit) tx_.limit = recent + k_;
        while (tx_.limit - seq < n) {
            const uint64_t group_end = (tx_.limit - k_) | group_mask_;
            const uint64_t acked = slots_.ack(static_cast<uint32_t>(group_end) & mask_).load(std::memory_order_acquire);
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
    const uint32_t group_mask_;  // G - 1: the receiver acknowledges messages m with m & group_mask_ == group_mask_
    Layout slots_;
    Sender tx_;
    Receiver rx_;
};

}  // namespace tp
