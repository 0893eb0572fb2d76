// TileQueue: one queue of a tile in the shared-memory MessageNetwork, a ring of `capacity`
// words that any number of senders push whole messages into and one receiver pops.
//
// Message-atomic without a lock: a sender reserves 1 + length words with one CAS on the
// tail, writes the payload, then publishes the header word with a release store. The ring
// is all words, header and payload alike (a descriptor alone in a message takes 24 bytes):
// a header is never zero (it carries kPublished), and the receiver zeroes every word it consumed
// before handing the words back, so the word at its head is zero until the message reserved
// there is published. The receiver finds the next header from the current one's length, and
// hands the words back by advancing `head`, which senders read only when their cached copy
// says the ring is full. So a message costs one CAS on a line senders share, and the
// receiver touches only the words and its own line: its cost does not depend on how many
// senders there are. A queue claimed by one sender (set_sole_sender) skips the CAS (on x86 a
// locked instruction waits for the sender's earlier stores to reach other cores), and a push
// that spends a credit (push_credited_many) skips the look at head too, so a credit channel's
// message costs its sender no line but the words'. Senders that share a queue and all spend
// credits (a receive interface with many senders) reserve with one fetch_add and no look at
// head (push_credited_shared_many). Several messages pushed at once (try_push_many) are one
// reservation. A credit interface sends a burst of items as one message, a run
// (detail/item_runs.hpp), and its receiver takes runs whole or in parts (try_pop_items).
//
// Ordering: messages leave in reservation order, each in one piece; one sender's messages
// keep their order. A sender preempted between its reservation and its publish holds back
// the messages reserved after it until it runs again (the price of one lock-free ring).
// Thread-safety: any number of pushing threads; one popping thread at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "framework/channel/detail/cache_line.hpp"
#include "framework/channel/detail/node_memory.hpp"
#include "framework/metrics/relaxed_counter.hpp"
#include "framework/noc/detail/header_word.hpp"
#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp::noc {

class TileQueue {
public:
    // The words are a NodeMemory block of the process heap: whole cache lines, so that a small
    // ring shares its line with nothing else, and whole pages bound to the placement open on
    // the building thread, if any (detail::NodeMemoryPlacement: the `memory:` setting).
    explicit TileQueue(uint32_t capacity)  // a power of two, at least 2
        : mask_(capacity - 1),
          memory_(sizeof(Word) * capacity, -1, tp::detail::NodeMemory::Heap::Process),
          words_(static_cast<Word*>(memory_.get())) {
        for (uint32_t i = 0; i < capacity; ++i) new (&words_[i]) Word{0};
    }

    uint32_t capacity() const { return static_cast<uint32_t>(mask_ + 1); }

    // The sender a queue is claimed by (credit interfaces claim the queues they own),
    // kCreditedSenders (credit interfaces share it) or kAnySender. A claimed queue takes its
    // sender's pushes without the CAS; set it before traffic starts (thread creation then
    // orders it for every sender).
    static constexpr uint32_t kAnySender = detail::kAnySender;
    void set_sole_sender(uint32_t sender) { prod_.sole_sender.store(sender, std::memory_order_relaxed); }
    uint32_t sole_sender() const { return prod_.sole_sender.load(std::memory_order_relaxed); }  // relaxed: see above

    // Pushes `header` and `n` payload words as one message; false when fewer than n + 1
    // words are free (the caller counts the stall). `sole`: the caller is the sole sender.
    bool try_push(bool sole, uint64_t header, const uint64_t* payload, uint32_t n) {
        return try_push_many(sole, header, payload, n, 1);
    }

    // Pushes `count` messages of `n` payload words each (payloads back to back in `payload`,
    // read as bytes: any trivially copyable items of whole words, descriptors included),
    // all with `header`'s source and tag, in one reservation: one CAS for the run instead of
    // one per message, so senders sharing the queue meet on its tail line once per burst.
    // All or nothing: false when fewer than count x (n + 1) words are free.
    bool try_push_many(bool sole, uint64_t header, const void* payload, uint32_t n, uint32_t count) {
        const uint64_t need = uint64_t{count} * (n + 1);
        // relaxed: the sole sender is the only writer of tail; for the others only a first
        // guess, which the CAS below checks.
        uint64_t tail = prod_.tail.load(std::memory_order_relaxed);
        if (sole) {
            if (!has_room(tail, need)) return false;
            // relaxed: no other sender reserves here; each message is published by its header
            // below. No locked instruction: the previous stores drain in the background.
            prod_.tail.store(tail + need, std::memory_order_relaxed);
        } else {
            do {
                if (!has_room(tail, need)) return false;
                // relaxed: the CAS only makes the reservation exclusive; each message is
                // published by its header's release store.
            } while (!prod_.tail.compare_exchange_weak(tail, tail + need, std::memory_order_relaxed,
                                                       std::memory_order_relaxed));
        }
        write_run(tail, header, payload, n, count);
        return true;
    }

    // The sole sender's push of `count` messages of `n` words (see try_push_many) that credits
    // stand for: the queue's room is set aside for the credits and only they push here, so
    // there is room, and the receiver's reads and zeroing of the words reused happened before
    // it sent the credits these pushes spend (credits and messages are both FIFO, a credit
    // published with release and taken with acquire). So no look at head at all, and no CAS.
    void push_credited_many(uint64_t header, const void* payload, uint32_t n, uint32_t count) {
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);  // relaxed: only this sender writes it
        prod_.tail.store(tail + uint64_t{count} * (n + 1), std::memory_order_relaxed);  // relaxed: published by headers
        write_run(tail, header, payload, n, count);
    }

    // A push of `count` messages of `n` words (see try_push_many) into a queue that credit
    // interfaces share (claim_credited: every push here spends a credit, and the credits of
    // all of them together stand for at most the queue's words). So there is room, and the
    // reservation is one fetch_add, never retried, where a CAS loop that also checks room
    // fails and goes round once per competing sender (many workers into one collector).
    //
    // Ordering (acq_rel): the words reserved were handed back, and the receiver's reads and
    // zeroing of them happen before these writes. The release half passes on what a sender
    // knew along the tail's chain of read-modify-writes; the acquire half takes what every
    // earlier reservation knew. Each of those spent a credit per item its sender held, an
    // initial one or one returned for an earlier item, and that return is now known here. So
    // the items not known returned all hold credits: their words, these included, are at
    // most the words set aside (a run of j items takes j x n + 1 words, at most the j x
    // (1 + n) its credits stand for; what is left of a split run likewise), at most the
    // queue's. The receiver returns an item's credit after handing back the words before the
    // rest of its run and all before them, so everything up to the newest known return is
    // handed back, which covers the last message that held these words.
    void push_credited_shared_many(uint64_t header, const void* payload, uint32_t n, uint32_t count) {
        const uint64_t tail = prod_.tail.fetch_add(uint64_t{count} * (n + 1), std::memory_order_acq_rel);
        write_run(tail, header, payload, n, count);
    }

    // Pops the message at the head: its header word, and its payload into `payload` (room
    // for the longest payload pushed). False when the queue is empty (or the next message is
    // reserved but not yet published).
    bool try_pop(uint64_t& header, uint64_t* payload) {
        const uint64_t head = cons_.next;
        Word& h = words_[head & mask_];
        // acquire: pairs with the sender's release of the header: its payload is written.
        const uint64_t word = h.load(std::memory_order_acquire);
        if (word == 0) return false;
        header = word & ~kPublished;
        const uint32_t n = detail::header_length(header);
        for (uint32_t i = 0; i < n; ++i) payload[i] = take(head + 1 + i);
        h.store(0, std::memory_order_relaxed);  // relaxed: handed back by the release of head
        hand_back(head + 1 + n);
        cons_.messages.inc();
        cons_.words.add(n);
        return true;
    }

    // Pops up to `max` items of `n` words each from the messages at the head whose header
    // matches `match` under `mask` (a tag) and whose payload is a whole number of items (a
    // run: a sender's burst as one message, see CreditSender), stopping before the first
    // message that is not there yet or is not such a run; `stray` says that the head is one
    // of those others. Items go back to back into `payload`, written as bytes (room for max
    // x n words: the items may be descriptors); on_run(header, items) is called for each
    // message taken from, with its header word and how many of its items were taken.
    // Returns how many items.
    //
    // A run longer than what is left of `max` is split: its first items are taken and the
    // rest stays at the head as a shorter run, its header rewritten into the last word taken
    // (the words of a message the receiver acquired are its own until it hands them back:
    // no sender writes them, so only it reads that word). Words handed back: n per item, and
    // the header's once its run is done.
    template <typename OnRun>
    uint32_t try_pop_items(uint64_t match, uint64_t mask, uint32_t n, uint32_t max, void* payload, bool& stray,
                           OnRun&& on_run) {
        auto* out = static_cast<std::byte*>(payload);
        uint64_t pos = cons_.next;
        uint32_t got = 0;
        uint64_t messages = 0;
        bool odd = false;
        while (got < max) {
            Word& h = words_[pos & mask_];
            // acquire: pairs with the sender's release of the header: its payload is written.
            const uint64_t word = h.load(std::memory_order_acquire);
            if (word == 0) break;
            const uint32_t len = detail::header_length(word);
            if ((word & mask) != match || len == 0 || len % n != 0) {
                odd = got == 0;
                break;
            }
            const uint32_t k = len / n;
            const uint32_t taken = k < max - got ? k : max - got;
            // The words read here are zeroed too: fetch their lines for writing at once.
            for (uint64_t w = pos & ~uint64_t{7}; w <= pos + uint64_t{taken} * n; w += 8)
                tp::detail::prefetch_for_write(&words_[w & mask_]);
            for (uint32_t i = 0; i < taken * n; ++i) {
                const uint64_t w = take(pos + 1 + i);
                std::memcpy(out + (size_t{got} * n + i) * sizeof w, &w, sizeof w);
            }
            on_run(word & ~kPublished, taken);
            got += taken;
            h.store(0, std::memory_order_relaxed);  // relaxed: handed back by the release of head
            if (taken < k) {
                // relaxed: the receiver's own word until it hands it back (see above).
                words_[(pos + uint64_t{taken} * n) & mask_].store(
                    (word & ~(uint64_t{0xffff} << 32)) | (uint64_t{(k - taken) * n} << 32), std::memory_order_relaxed);
                pos += uint64_t{taken} * n;
                break;
            }
            pos += 1 + len;
            ++messages;
        }
        stray = odd;
        if (got == 0) return 0;
        hand_back(pos);
        cons_.messages.add(messages);
        cons_.words.add(uint64_t{got} * n);
        return got;
    }

    // Words pushed but not yet popped (a snapshot; reserved-but-unpublished ones included).
    uint64_t queued_words() const {
        // relaxed: a statistic; no data is read through it. Head first: a tail read after it
        // is at least as recent, and what a stale pair would give is clamped at 0.
        const uint64_t head = cons_.head.load(std::memory_order_relaxed);
        const uint64_t tail = prod_.tail.load(std::memory_order_relaxed);
        return tail > head ? tail - head : 0;
    }

    void count_stall() { prod_.stalls.fetch_add(1, std::memory_order_relaxed); }  // relaxed: a statistic
    uint64_t messages() const { return cons_.messages.get(); }
    uint64_t words() const { return cons_.words.get(); }
    uint64_t stalls() const { return prod_.stalls.load(std::memory_order_relaxed); }  // relaxed: a statistic

    Doorbell& data_bell() { return data_bell_; }    // the receiver parks here while empty
    Doorbell& space_bell() { return space_bell_; }  // senders park here while full

private:
    // Marks a stored header: a word at a header's place is zero until its message is there.
    static constexpr uint64_t kPublished = uint64_t{1} << 63;

    // Writes `count` messages reserved from `tail` on and publishes each header in order.
    void write_run(uint64_t tail, uint64_t header, const void* payload, uint32_t n, uint32_t count) {
        const auto* in = static_cast<const std::byte*>(payload);
        for (uint32_t m = 0; m < count; ++m) {
            const uint64_t at = tail + uint64_t{m} * (n + 1);
            // relaxed: published by the header's release store below.
            for (uint32_t i = 0; i < n; ++i)
                words_[(at + 1 + i) & mask_].store(word_at(in, size_t{m} * n + i), std::memory_order_relaxed);
            // release: the payload is visible to a receiver that acquires this header.
            words_[at & mask_].store(header | kPublished, std::memory_order_release);
        }
    }

    static uint64_t word_at(const std::byte* p, size_t i) {
        uint64_t w;
        std::memcpy(&w, p + i * sizeof w, sizeof w);  // a word of whatever trivially copyable items
        return w;
    }

    // Reads a payload word and leaves zero behind (a later message's header may land there).
    uint64_t take(uint64_t pos) {
        Word& w = words_[pos & mask_];
        const uint64_t v = w.load(std::memory_order_relaxed);  // relaxed: ordered by the header's acquire
        w.store(0, std::memory_order_relaxed);                 // relaxed: handed back by the release of head
        return v;
    }

    void hand_back(uint64_t next) {
        cons_.next = next;
        // release: our reads and zeroing of these words happen before a sender that acquires
        // head reuses them.
        cons_.head.store(next, std::memory_order_release);
    }

    // True when positions [tail, tail + need) are free: the receiver's head has passed them.
    // A stale `tail` (a sender that lost a race) that is behind head is reloaded; one that is
    // not only errs towards full, and the CAS catches it anyway.
    bool has_room(uint64_t& tail, uint64_t need) {
        // acquire: pairs with the release that stored this copy of head, which carries the
        // receiver's release of head: its reads and zeroing of the words we reuse are done.
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

    using Word = std::atomic<uint64_t>;
    // Each side's state on a 128-byte pair of its own (tp::detail::kNoFalseSharing): x86's
    // adjacent-line prefetcher moves lines in pairs, so senders' reservations on a line next
    // to the receiver's would drag the receiver's line along with every push.
    struct alignas(tp::detail::kNoFalseSharing) Senders {
        std::atomic<uint64_t> tail{0};        // next position to reserve
        std::atomic<uint64_t> head_cache{0};  // a recent value of head, shared by the senders
        std::atomic<uint64_t> stalls{0};
        std::atomic<uint32_t> sole_sender{kAnySender};
    };
    struct alignas(tp::detail::kNoFalseSharing) Receiver {
        std::atomic<uint64_t> head{0};  // first position not yet popped, published for senders
        uint64_t next = 0;              // the receiver's own copy of head
        RelaxedCounter messages;
        RelaxedCounter words;
    };

    const uint64_t mask_;
    tp::detail::NodeMemory memory_;  // a Word is trivially destructible: freeing the block ends them
    Word* const words_;
    Senders prod_;
    Receiver cons_;
    Doorbell data_bell_;
    Doorbell space_bell_;
};

}  // namespace tp::noc
