// TileQueue: one queue of a tile in the shared-memory MessageNetwork, a ring of `capacity`
// words that any number of senders push whole messages into and one receiver pops.
//
// Message-atomic without a lock: a sender reserves 1 + length slots with one CAS on the
// tail, writes the payload, then publishes the header slot with a release store of its
// position (a per-slot sequence number as in Vyukov's bounded queue, carried by header slots
// only: the receiver finds the next header from the current one's length). The receiver
// checks the sequence of the slot at its head, copies the message, and hands the slots back
// by advancing `head`, which senders read only when their cached copy says the ring is full.
// So a message costs one CAS on a line senders share, and the receiver touches only the
// slots and its own line: its cost does not depend on how many senders there are. A queue
// claimed by one sender (set_sole_sender) skips the CAS: on x86 a locked instruction waits
// for the sender's earlier stores to reach other cores, which would put a cache-line
// transfer on the path of every message a tile sends right after receiving one.
//
// Ordering: messages leave in reservation order, each in one piece; one sender's messages
// keep their order. A sender preempted between its reservation and its publish holds back
// the messages reserved after it until it runs again (the price of one lock-free ring).
// Thread-safety: any number of pushing threads; one popping thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>

#include "framework/metrics/relaxed_counter.hpp"
#include "framework/noc/detail/header_word.hpp"
#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp::noc {

class TileQueue {
public:
    explicit TileQueue(uint32_t capacity)  // a power of two, at least 2
        : mask_(capacity - 1),
          slots_(static_cast<Slot*>(::operator new(sizeof(Slot) * capacity, std::align_val_t{64}))) {
        for (uint32_t i = 0; i < capacity; ++i) new (&slots_[i]) Slot{};
    }

    uint32_t capacity() const { return static_cast<uint32_t>(mask_ + 1); }

    // The sender a queue is claimed by (credit interfaces claim the queues they own), or
    // kAnySender. A claimed queue takes its sender's pushes without the CAS; set it before
    // traffic starts (thread creation then orders it for every sender).
    static constexpr uint32_t kAnySender = detail::kAnySender;
    void set_sole_sender(uint32_t sender) { prod_.sole_sender.store(sender, std::memory_order_relaxed); }
    uint32_t sole_sender() const { return prod_.sole_sender.load(std::memory_order_relaxed); }  // relaxed: see above

    // Pushes `header` and `n` payload words as one message; false when fewer than n + 1
    // words are free (the caller counts the stall). `sole`: the caller is the sole sender.
    bool try_push(bool sole, uint64_t header, const uint64_t* payload, uint32_t n) {
        const uint64_t need = uint64_t{n} + 1;
        // relaxed: the sole sender is the only writer of tail; for the others only a first
        // guess, which the CAS below checks.
        uint64_t tail = prod_.tail.load(std::memory_order_relaxed);
        if (sole) {
            if (!has_room(tail, need)) return false;
            // relaxed: no other sender reserves here; the message is published by seq below.
            // No locked instruction: the stores of the previous message drain in the background.
            prod_.tail.store(tail + need, std::memory_order_relaxed);
        } else {
            do {
                if (!has_room(tail, need)) return false;
                // relaxed: the CAS only makes the reservation exclusive; the message is
                // published by the header's release store below.
            } while (!prod_.tail.compare_exchange_weak(tail, tail + need, std::memory_order_relaxed,
                                                       std::memory_order_relaxed));
        }
        for (uint32_t i = 0; i < n; ++i) slots_[(tail + 1 + i) & mask_].word = payload[i];
        Slot& h = slots_[tail & mask_];
        h.word = header;
        // release: header and payload are visible to a receiver that acquires this sequence.
        h.seq.store(tail + 1, std::memory_order_release);
        // Ask now for the line two ahead of the next message: by the time a sender writes
        // there the line is its own, so no later locked instruction of this thread waits for
        // another core to give it up. Never the line the receiver polls when it has caught up.
        if (mask_ + 1 >= kPrefetchMinSlots) prefetch_for_write(&slots_[(tail + need + kPrefetchAhead) & mask_]);
        return true;
    }

    // Pops the message at the head: its header word, and its payload into `payload` (room
    // for the longest payload pushed). False when the queue is empty (or the next message is
    // reserved but not yet published).
    bool try_pop(uint64_t& header, uint64_t* payload) {
        const uint64_t head = cons_.next;
        const Slot& h = slots_[head & mask_];
        // acquire: pairs with the sender's release of seq: header and payload are written.
        if (h.seq.load(std::memory_order_acquire) != head + 1) return false;
        header = h.word;
        const uint32_t n = detail::header_length(header);
        for (uint32_t i = 0; i < n; ++i) payload[i] = slots_[(head + 1 + i) & mask_].word;
        cons_.next = head + 1 + n;
        // release: our reads of these slots happen before a sender that acquires head reuses them.
        cons_.head.store(cons_.next, std::memory_order_release);
        cons_.messages.inc();
        cons_.words.add(n);
        return true;
    }

    // Words pushed but not yet popped (a snapshot; reserved-but-unpublished ones included).
    uint64_t queued_words() const {
        // relaxed: a statistic; no data is read through it.
        return prod_.tail.load(std::memory_order_relaxed) - cons_.head.load(std::memory_order_relaxed);
    }

    void count_stall() { prod_.stalls.fetch_add(1, std::memory_order_relaxed); }  // relaxed: a statistic
    uint64_t messages() const { return cons_.messages.get(); }
    uint64_t words() const { return cons_.words.get(); }
    uint64_t stalls() const { return prod_.stalls.load(std::memory_order_relaxed); }  // relaxed: a statistic

    Doorbell& data_bell() { return data_bell_; }    // the receiver parks here while empty
    Doorbell& space_bell() { return space_bell_; }  // senders park here while full

private:
    static constexpr uint64_t kPrefetchAhead = 8;      // slots: two 64-byte lines
    static constexpr uint64_t kPrefetchMinSlots = 64;  // smaller rings: the line may be in use

    static void prefetch_for_write(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
        asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));  // a NOP where unsupported
#else
        __builtin_prefetch(p, 1, 3);
#endif
    }

    // True when positions [tail, tail + need) are free: the receiver's head has passed them.
    // A stale `tail` (a sender that lost a race) that is behind head is reloaded; one that is
    // not only errs towards full, and the CAS catches it anyway.
    bool has_room(uint64_t& tail, uint64_t need) {
        // acquire: pairs with the release that stored this copy of head, which carries the
        // receiver's release of head: its reads of the slots we are about to reuse are done.
        uint64_t head = prod_.head_cache.load(std::memory_order_acquire);
        if (tail >= head && tail + need - head <= capacity()) return true;
        // acquire: pairs with the receiver's release of head (same reason).
        head = cons_.head.load(std::memory_order_acquire);
        // release: the next sender that acquires this copy inherits that ordering.
        prod_.head_cache.store(head, std::memory_order_release);
        // relaxed: the reservation of every popped message happened before the acquire above,
        // so the tail read now is at least head.
        if (tail < head) tail = prod_.tail.load(std::memory_order_relaxed);
        return tail + need - head <= capacity();
    }

    struct Slot {
        std::atomic<uint64_t> seq{0};  // position + 1 of the header published here
        uint64_t word = 0;
    };
    struct AlignedDelete {
        void operator()(Slot* p) const { ::operator delete(p, std::align_val_t{64}); }  // Slot is trivially destructible
    };
    struct alignas(64) Senders {
        std::atomic<uint64_t> tail{0};        // next position to reserve
        std::atomic<uint64_t> head_cache{0};  // a recent value of head, shared by the senders
        std::atomic<uint64_t> stalls{0};
        std::atomic<uint32_t> sole_sender{kAnySender};
    };
    struct alignas(64) Receiver {
        std::atomic<uint64_t> head{0};  // first position not yet popped, published for senders
        uint64_t next = 0;              // the receiver's own copy of head
        RelaxedCounter messages;
        RelaxedCounter words;
    };

    const uint64_t mask_;
    std::unique_ptr<Slot[], AlignedDelete> slots_;
    Senders prod_;
    Receiver cons_;
    Doorbell data_bell_;
    Doorbell space_bell_;
};

}  // namespace tp::noc
