// SmChannel<T, Layout>: the paper's shared-memory communication interface (Buono & Mencagli,
// TILEPro64), transport `sm`, with asynchrony degree K.
//
// K slots used round-robin. Each slot has a ready word and its messages, written only by the
// sender, and an ack word written only by the receiver. In the default layout (SmSplitLayout,
// this file) {ready, messages} share one cache line and {ack} sits on another, so each line has
// a single writer; `sm_shared` (transport_sm_shared.hpp) puts all of them on one line.
//
// A slot holds as many items as fit its line beside the ready word (kPerSlot: 7 words, or 3
// 16-byte PacketDescs), so a burst crosses in a line per kPerSlot items, as in a ring, where
// the paper's interface moves a line per message; a single item takes a slot of its own,
// exactly as the paper's. At most K items are in flight whatever the slots hold, so K is
// the asynchrony degree in items, and with at least one item per slot no slot is reused
// before it was read: K + 1 slots in flight would hold K + 1 items.
//
// The words carry cumulative item counts instead of flags, so neither side clears the
// other's word: the sender publishes a slot with ready = the number of items sent once it is
// included; the receiver, having taken c items in all, finds the next slot published when its
// ready exceeds c (an older lap's value cannot: it was at most c), and reads ready - c items
// there (it may take part of a slot and the rest later). It acknowledges by writing c to a
// slot's ack word: any ack is a lower bound of the items taken, so the sender takes the
// largest it reads. Acks come in groups: at the last slot of each group of G slots (G = 8, or
// fewer for a group to hold at most about K/2 items) once it has been read, and at the slot
// where each burst the receiver takes ends: a burst of 32 words writes 1-2 ack lines instead
// of 32 (the paper acknowledges every message). The sender reads the ack of its newest slot first (one line read frees
// everything when the receiver keeps up), and otherwise tests group ends from the oldest it
// does not know read; see refresh.
//
// Memory: the slots are allocated on the receiver's NUMA node (NodeMemory). The paper homes
// the ack lines at the sender; ChannelSpec names only the receiver's node, so both live there.
// Ordering: FIFO, exactly once. Thread-safety: one sender thread, one receiver thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
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

private:
    // The items start at the first offset past the ready word that T's alignment allows.
    static constexpr size_t kItemsAt = (sizeof(uint64_t) + alignof(T) - 1) / alignof(T) * alignof(T);

public:
    static constexpr uint32_t kPerSlot = (detail::kCacheLine - kItemsAt) / sizeof(T);
    static_assert(kPerSlot >= 1, "{ready, an item} must fit one cache line");

    std::atomic<uint64_t>& ready(uint32_t i) { return data_[i].ready; }
    T* msgs(uint32_t i) { return data_[i].msgs; }
    std::atomic<uint64_t>& ack(uint32_t i) { return acks_[i].ack; }
    const std::atomic<uint64_t>& ready(uint32_t i) const { return data_[i].ready; }
    const T* msgs(uint32_t i) const { return data_[i].msgs; }
    const std::atomic<uint64_t>& ack(uint32_t i) const { return acks_[i].ack; }

private:
    struct alignas(detail::kCacheLine) DataLine {
        std::atomic<uint64_t> ready{0};
        T msgs[kPerSlot]{};
    };
    struct alignas(detail::kCacheLine) AckLine {
        std::atomic<uint64_t> ack{0};
    };
    static_assert(sizeof(DataLine) == detail::kCacheLine, "{ready, messages} must fit one cache line");

    detail::NodeMemory data_mem_;
    detail::NodeMemory ack_mem_;
    DataLine* data_;
    AckLine* acks_;
};

template <typename T, typename Layout = SmSplitLayout<T>>
class SmChannel final : public Channel<T> {
public:
    explicit SmChannel(uint32_t k, int socket = -1)
        : k_(detail::checked_capacity(Layout::kName, k, true)), mask_(k - 1), group_mask_(group_slots(k) - 1),
          group_shift_(std::countr_zero(group_mask_ + 1)), slots_(k, socket), ends_(std::make_unique<uint64_t[]>(k >> group_shift_)) {}

    // Single items skip the burst bookkeeping: same protocol, fewer instructions (a slot of
    // their own, and the ack of the slot read, be it a group's end or a burst's).
    bool try_send(const T& item) override {
        if (tx_.taken + k_ == tx_.sent) {
            refresh(1);
            if (tx_.taken + k_ == tx_.sent) return false;
        }
        const uint32_t s = static_cast<uint32_t>(tx_.slot++) & mask_;
        slots_.msgs(s)[0] = item;
        ++tx_.sent;
        if ((s & group_mask_) == group_mask_) group_end_count(s) = tx_.sent;
        // release: the message is visible to a receiver that reads this ready with acquire.
        slots_.ready(s).store(tx_.sent, std::memory_order_release);
        if (Doorbell* b = this->receiver_bell()) b->ring();
        return true;
    }

    bool try_recv(T& item) override {
        const uint32_t s = static_cast<uint32_t>(rx_.slot) & mask_;
        // acquire: pairs with the sender's release of ready.
        const uint64_t ready = slots_.ready(s).load(std::memory_order_acquire);
        const uint64_t taken = rx_.taken;
        if (ready <= taken) return false;
        item = slots_.msgs(s)[taken - rx_.slot_start];
        rx_.taken = taken + 1;
        if (taken + 1 == ready) {
            rx_.slot++;
            rx_.slot_start = ready;
        }
        // release: our read of the message happens before the sender's reuse of its slot.
        slots_.ack(s).store(taken + 1, std::memory_order_release);
        if (Doorbell* b = this->sender_bell()) b->ring();
        return true;
    }

    uint32_t try_send_burst(const T* items, uint32_t n) override {
        uint64_t sent = tx_.sent;
        if (tx_.taken + k_ - sent < n) refresh(n);
        if (tx_.taken + k_ - sent < n) n = static_cast<uint32_t>(tx_.taken + k_ - sent);
        uint64_t slot = tx_.slot;
        for (uint32_t i = 0; i < n; ++slot) {
            const uint32_t s = static_cast<uint32_t>(slot) & mask_;
            const uint32_t m = std::min(n - i, kPerSlot);
            T* dst = slots_.msgs(s);
            for (uint32_t j = 0; j < m; ++j) dst[j] = items[i + j];
            i += m;
            sent += m;
            if ((s & group_mask_) == group_mask_) group_end_count(s) = sent;
            // release: the messages are visible to a receiver that reads this ready with acquire.
            slots_.ready(s).store(sent, std::memory_order_release);
        }
        tx_.sent = sent;
        tx_.slot = slot;
        if (n != 0)
            if (Doorbell* b = this->receiver_bell()) b->ring();
        return n;
    }

    uint32_t try_recv_burst(T* items, uint32_t n) override {
        uint64_t taken = rx_.taken;
        uint64_t slot = rx_.slot;
        uint64_t start = rx_.slot_start;
        uint64_t last = 0;   // the slot of the last item taken
        bool acked = false;  // and its ack says so already (it ends a group)
        uint32_t i = 0;
        while (i < n) {
            const uint32_t s = static_cast<uint32_t>(slot) & mask_;
            // acquire: pairs with the sender's release of ready, so the messages below it are
            // the ones it published.
            const uint64_t ready = slots_.ready(s).load(std::memory_order_acquire);
            if (ready <= taken) break;
            const uint32_t m = static_cast<uint32_t>(std::min<uint64_t>(ready - taken, n - i));
            const T* src = slots_.msgs(s) + (taken - start);
            for (uint32_t j = 0; j < m; ++j) items[i + j] = src[j];
            i += m;
            taken += m;
            last = slot;
            acked = false;
            if (taken != ready) break;  // n items taken; the rest of this slot waits
            // release (both acks): our reads of every message up to `taken` happen before
            // the sender's reuse of their slots (it acquires an ack).
            if ((slot & group_mask_) == group_mask_) {
                slots_.ack(s).store(taken, std::memory_order_release);
                acked = true;
            }
            ++slot;
            start = taken;
        }
        rx_.taken = taken;
        rx_.slot = slot;
        rx_.slot_start = start;
        if (i != 0) {
            if (!acked) slots_.ack(static_cast<uint32_t>(last) & mask_).store(taken, std::memory_order_release);
            if (Doorbell* b = this->sender_bell()) b->ring();
        }
        return i;
    }

    uint32_t capacity() const override { return k_; }
    const char* transport() const override { return Layout::kName; }
    // The newest ready count less the newest ack (one pass over the K slots, relaxed loads;
    // the sender's and receiver's counts are private): the receiver acknowledges where every
    // burst it takes ends, so the newest ack is where it stands.
    int64_t queued() const override {
        uint64_t sent = 0, taken = 0;
        for (uint32_t s = 0; s < k_; ++s) {
            sent = std::max(sent, slots_.ready(s).load(std::memory_order_relaxed));
            taken = std::max(taken, slots_.ack(s).load(std::memory_order_relaxed));
        }
        return sent > taken ? static_cast<int64_t>(sent - taken) : 0;
    }

private:
    static constexpr uint32_t kPerSlot = Layout::kPerSlot;

    // G: 8 slots, or fewer so that a group holds at most about K/2 items, as the sender
    // learns of room a group at a time when the receiver is behind.
    static uint32_t group_slots(uint32_t k) { return std::bit_floor(std::clamp<uint32_t>(k / 2 / kPerSlot, 1, 8)); }

    // Sender: learns from acks how many items the receiver has taken (`taken`), so that
    // items below taken + K may be sent. Every ack is a count the receiver had taken when it
    // wrote it, so any ack read, however old, is a safe lower bound. The ack of the newest
    // slot frees everything when the receiver keeps up, so a sender that is not ahead reads
    // one ack line per K items and the receiver's ack stores find their lines still in its
    // own cache. When the receiver is behind, the sender tests the group ends from the oldest
    // slot not known taken whole (`cursor`) on, as the paper's sender tests each slot: a group
    // taken whole shows an ack of at least its last slot's end (`ends_`), while any older
    // lap's ack there is below it. The lines it reads are ones the receiver writes once per
    // group at most (its acks at the ends of bursts go to their own slots), so a sender that
    // waits for room does not pull at the lines the receiver is writing.
    void refresh(uint32_t n) {
        if (tx_.slot == 0) return;  // nothing sent: every slot is free
        // acquire (every ack load): pairs with the receiver's release of ack, so its reads of
        // the messages of every item it counted are complete before we overwrite them.
        const uint64_t newest = tx_.slot - 1;
        learn(slots_.ack(static_cast<uint32_t>(newest) & mask_).load(std::memory_order_acquire));
        while (tx_.taken + k_ - tx_.sent < n) {
            const uint64_t group_end = tx_.cursor | group_mask_;
            if (group_end >= newest) break;  // the newest was read above; later ones are not written
            const uint32_t g = static_cast<uint32_t>(group_end) & mask_;
            const uint64_t acked = slots_.ack(g).load(std::memory_order_acquire);
            learn(acked);
            if (acked < group_end_count(g)) break;  // the receiver is within this group
            tx_.cursor = std::max(tx_.cursor, group_end + 1);
        }
    }
    // The ready count written at group-end slot s (s < K).
    uint64_t& group_end_count(uint32_t s) { return ends_[s >> group_shift_]; }

    // Takes an ack's count and moves `cursor` past the groups it covers whole.
    void learn(uint64_t acked) {
        if (acked <= tx_.taken) return;
        tx_.taken = acked;
        if (acked >= tx_.sent) {
            tx_.cursor = tx_.slot;
            return;
        }
        // Writing slot s proved slot s - K taken whole (the K slots after it held an item each).
        if (tx_.slot - tx_.cursor > k_) tx_.cursor = tx_.slot - k_;
        for (uint64_t g = tx_.cursor | group_mask_; g < tx_.slot && group_end_count(static_cast<uint32_t>(g) & mask_) <= acked; g += group_mask_ + 1)
            tx_.cursor = g + 1;
    }

    struct alignas(detail::kNoFalseSharing) Sender {
        uint64_t sent = 0;    // items sent
        uint64_t taken = 0;   // items the receiver is known to have taken
        uint64_t slot = 0;    // next slot number
        uint64_t cursor = 0;  // slots below it are known taken whole
    };
    struct alignas(detail::kNoFalseSharing) Receiver {
        uint64_t taken = 0;       // items taken
        uint64_t slot = 0;        // the slot the next item is in
        uint64_t slot_start = 0;  // items taken before that slot's first
    };
    const uint32_t k_;
    const uint32_t mask_;
    const uint32_t group_mask_;  // G - 1: the receiver acknowledges at slots s with s & group_mask_ == group_mask_
    const uint32_t group_shift_;  // log2 G
    Layout slots_;
    std::unique_ptr<uint64_t[]> ends_;  // the sender's: the ready count it wrote at each group's end, per group
    Sender tx_;
    Receiver rx_;
};

}  // namespace tp
