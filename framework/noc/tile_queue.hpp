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
// claimed by one sender (set_sole_sender) skips the CAS (on x86 a locked instruction waits
// for the sender's earlier stores to reach other cores), and a push that spends a credit
// (push_credited) skips the look at head too, so a credit channel's message costs its
// sender no line but the slots'.
//
// Ordering: messages leave in reservation order, each in one piece; one sender's messages
// keep their order. A sender preempted between its reservation and its publish holds back
// the messages reserved after it until it runs again (the price of one lock-free ring).
// Thread-safety: any number of pushing threads; one popping thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "framework/channel/detail/node_memory.hpp"
#include "framework/metrics/relaxed_counter.hpp"
#include "framework/noc/detail/header_word.hpp"
#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp::noc {

class TileQueue {
public:
    // The slots are a NodeMemory block of the process heap: whole cache lines, so that a small
    // ring shares its line with nothing else, and whole pages bound to the placement open on
    // the building thread, if any (detail::NodeMemoryPlacement: the `memory:` setting).
    explicit TileQueue(uint32_t capacity)  // a power of two, at least 2
        : mask_(capacity - 1),
          memory_(sizeof(Slot) * capacity, -1, tp::detail::NodeMemory::Heap::Process),
          slots_(static_cast<Slot*>(memory_.get())) {
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
        return true;
    }

    // Pushes `count` messages of `n` payload words each (payloads back to back in `payload`),
    // all with `header`'s source and tag, in one reservation: one CAS for the run instead of
    // one per message, so senders sharing the queue meet on its tail line once per burst.
    // All or nothing: false when fewer than count x (n + 1) words are free.
    bool try_push_many(bool sole, uint64_t header, const uint64_t* payload, uint32_t n, uint32_t count) {
        const uint64_t need = uint64_t{count} * (n + 1);
        // relaxed: as in try_push.
        uint64_t tail = prod_.tail.load(std::memory_order_relaxed);
        if (sole) {
            if (!has_room(tail, need)) return false;
            prod_.tail.store(tail + need, std::memory_order_relaxed);  // relaxed: as in try_push
        } else {
            do {
                if (!has_room(tail, need)) return false;
                // relaxed: as in try_push (each header's release store publishes its message).
            } while (!prod_.tail.compare_exchange_weak(tail, tail + need, std::memory_order_relaxed,
                                                       std::memory_order_relaxed));
        }
        write_run(tail, header, payload, n, count);
        return true;
    }

    // push_credited for a run of `count` messages of `n` words (see try_push_many).
    void push_credited_many(uint64_t header, const uint64_t* payload, uint32_t n, uint32_t count) {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // relaxed: only this sender writes it
        prod_.tail.store(tail + uint64_t{count} * (n + 1), std::memory_order_relaxed);  // relaxed: published by seq
        write_run(tail, header, payload, n, count);
    }

    // The sole sender's push of a message a credit stands for: the queue's room is set aside
    // for the credits and only they push here, so there is room, and the receiver's reads of
    // the slots reused happened before it sent the credit this push spends (credits and
    // messages are both FIFO). So no look at head at all, and no CAS.
    void push_credited(uint64_t header, const uint64_t* payload, uint32_t n) {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // relaxed: only this sender writes it
        prod_.tail.store(tail + n + 1, std::memory_order_relaxed);        // relaxed: published by seq below
        for (uint32_t i = 0; i < n; ++i) slots_[(tail + 1 + i) & mask_].word = payload[i];
        Slot& h = slots_[tail & mask_];
        h.word = header;
        // release: header and payload are visible to a receiver that acquires this sequence.
        h.seq.store(tail + 1, std::memory_order_release);
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

    // Pops up to `max` messages in a row whose header matches `match` under `mask` (a tag and
    // a length of n payload words), stopping before the first that is not there yet or does
    // not match; header words into `headers`, payloads back to back into `payload`. Returns
    // how many. Knowing the length ahead, the receiver finds every header without reading
    // the one before, so the reads of a burst overlap instead of waiting on each other.
    uint32_t try_pop_many(uint64_t match, uint64_t mask, uint32_t n, uint32_t max, uint64_t* headers,
                          uint64_t* payload) {
        const uint64_t head = cons_.next;
        uint32_t got = 0;
        for (; got < max; ++got) {
            const uint64_t pos = head + uint64_t{got} * (n + 1);
            const Slot& h = slots_[pos & mask_];
            // acquire: pairs with the sender's release of seq: header and payload are written.
            if (h.seq.load(std::memory_order_acquire) != pos + 1 || (h.word & mask) != match) break;
            headers[got] = h.word;
            for (uint32_t i = 0; i < n; ++i) payload[got * n + i] = slots_[(pos + 1 + i) & mask_].word;
        }
        if (got == 0) return 0;
        cons_.next = head + uint64_t{got} * (n + 1);
        // release: as in try_pop.
        cons_.head.store(cons_.next, std::memory_order_release);
        cons_.messages.add(got);
        cons_.words.add(uint64_t{got} * n);
        return got;
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

    // Writes `count` messages reserved from `tail` on and publishes each header in order.
    void write_run(uint64_t tail, uint64_t header, const uint64_t* payload, uint32_t n, uint32_t count) {
        for (uint32_t m = 0; m < count; ++m) {
            const uint64_t at = tail + uint64_t{m} * (n + 1);
            for (uint32_t i = 0; i < n; ++i) slots_[(at + 1 + i) & mask_].word = payload[size_t{m} * n + i];
            Slot& h = slots_[at & mask_];
            h.word = header;
            // release: header and payload are visible to a receiver that acquires this sequence.
            h.seq.store(at + 1, std::memory_order_release);
        }
    }

    struct Slot {
        std::atomic<uint64_t> seq{0};  // position + 1 of the header published here
        uint64_t word = 0;
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
    tp::detail::NodeMemory memory_;  // Slot is trivially destructible: freeing the block ends them
    Slot* const slots_;
    Senders prod_;
    Receiver cons_;
    Doorbell data_bell_;
    Doorbell space_bell_;
};

}  // namespace tp::noc
