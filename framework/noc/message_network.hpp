// MessageNetwork: the UDN-style messaging network on shared memory. Every tile owns
// `queues` demux queues and a catch-all (TileQueue rings of `queue_words` words) and a tag
// table; a push names the destination tile and a tag, the destination's table picks the
// queue (a miss goes to the catch-all), and the message lands there in one piece.
//
// Promises (the same as EventdevNetwork's, so the credit interfaces run on either):
//  - Message-atomic: a message is pushed and popped whole; messages from concurrent senders
//    never interleave, with no lock on the push or pop path.
//  - Order: messages from one sender to one queue are popped in push order.
//  - try_push refuses when the queue lacks 1 + length free words (counted as a stall);
//    try_pop refuses when the queue is empty. push/pop wait through a WaitPolicy (spin,
//    yield, park); with `doorbells` on, the other side wakes them as soon as it acts.
//  - Thread-safety: one thread at a time pops a given queue; any number of threads push
//    (the eventdev backend adds a rule for a tile's pushes, see there). Tag binding and the
//    ledger may be used concurrently with traffic; claims are made before it starts.
// Errors: a tile or queue out of range throws std::out_of_range, a payload longer than
// max_payload std::invalid_argument.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/channel/detail/node_memory.hpp"
#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/noc/tag_table.hpp"
#include "framework/noc/tile_queue.hpp"
#include "framework/runtime/memory_binding.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc {

class MessageNetwork {
public:
    static constexpr const char* kBackend = "shared_memory";

    // throws std::invalid_argument. `tile_places`: per tile, the place its queues' slots are
    // bound to (whole pages each, framework/runtime/memory_binding.hpp), as channel buffers
    // follow their receiver's `memory:` setting; a tile past its end is not bound.
    explicit MessageNetwork(const NetworkConfig& config, const std::vector<MemoryPlace>& tile_places = {});
    MessageNetwork(const MessageNetwork&) = delete;
    MessageNetwork& operator=(const MessageNetwork&) = delete;

    const NetworkConfig& config() const { return config_; }
    uint32_t tiles() const { return config_.tiles; }
    uint32_t queues() const { return config_.queues; }
    uint32_t catch_all() const { return config_.queues; }

    // Tag table of `tile`: `tag` lands in demux queue `queue` (< queues()).
    void bind_tag(TileId tile, Tag tag, uint32_t queue);
    void unbind_tag(TileId tile, Tag tag);
    uint32_t queue_of(TileId tile, Tag tag) const;

    bool try_push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length) {
        return try_push(route(from, to, tag), payload, length);
    }
    void push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length, const WaitPolicy& policy = {});

    // `payload` must have room for max_payload words (kMaxPayload always suffices).
    bool try_pop(TileId tile, uint32_t queue_index, MessageHeader& header, uint64_t* payload) {
        return try_pop(mailbox(tile, queue_index), header, payload);
    }
    void pop(TileId tile, uint32_t queue_index, MessageHeader& header, uint64_t* payload, const WaitPolicy& policy = {});

    // A push target resolved once: the queue `tag` selects at `to` now, and the header.
    // Pushing through it skips the tag lookup and the range checks, which is what the credit
    // interfaces do per message; a later rebinding of the tag does not move a route.
    struct Route {
        TileQueue* queue = nullptr;
        uint64_t header = 0;  // source and tag; the length is added per push
        TileId from = 0;
        TileId to = 0;
        uint32_t queue_index = 0;
    };
    Route route(TileId from, TileId to, Tag tag) {
        detail::check_push(config_, kBackend, from, to, 0);
        const uint32_t qi = tags_[to].queue_of(tag);
        return Route{&queue(to, qi), detail::pack_header(from, tag, 0), from, to, qi};
    }
    bool try_push(const Route& r, const uint64_t* payload, uint32_t length) {
        return try_push_many(r, payload, length, 1, false);
    }

    // A push that spends a credit: `r`'s queue is claimed by r.from (one interface owns it)
    // or by credit interfaces (claim_credited) and its room set aside for the credits, so the
    // push cannot find it full and skips the room check (TileQueue::push_credited_many, or
    // push_credited_shared_many: one fetch_add instead of a CAS loop). Throws
    // std::logic_error when the queue is claimed neither way. Always true here (the eventdev
    // backend may refuse).
    bool try_push_credited(const Route& r, const uint64_t* payload, uint32_t length) {
        return try_push_many(r, payload, length, 1, true);
    }

    // `count` messages of `length` words each through `r` in one reservation (payloads back
    // to back, read as bytes): TileQueue::try_push_many, or a credited push when `credited`
    // (then the queue must be claimed as for try_push_credited). All or nothing.
    bool try_push_many(const Route& r, const void* payload, uint32_t length, uint32_t count, bool credited) {
        if (length > config_.max_payload) detail::throw_bad_push(config_, kBackend, r.from, r.to, length);
        const uint32_t sole = r.queue->sole_sender();
        const uint64_t header = r.header | (uint64_t{length} << 32);
        if (credited) {
            if (sole == r.from) r.queue->push_credited_many(header, payload, length, count);
            else if (sole == detail::kCreditedSenders) r.queue->push_credited_shared_many(header, payload, length, count);
            else detail::throw_claimed(kBackend, r.from, r.to, r.queue_index, sole);
        } else {
            detail::check_sender(kBackend, r.from, r.to, r.queue_index, sole);
            if (!r.queue->try_push_many(sole == r.from, header, payload, length, count)) {
                r.queue->count_stall();
                return false;
            }
        }
        if (config_.doorbells) r.queue->data_bell().ring();
        return true;
    }

    // A queue resolved once for popping.
    struct Mailbox {
        TileQueue* queue = nullptr;
    };
    Mailbox mailbox(TileId tile, uint32_t queue_index) {
        detail::check_queue(config_, kBackend, tile, queue_index, true);
        return Mailbox{&queue(tile, queue_index)};
    }
    bool try_pop(const Mailbox& m, MessageHeader& header, uint64_t* payload) {
        uint64_t word;
        if (!m.queue->try_pop(word, payload)) return false;
        header = detail::unpack_header(word);
        if (config_.doorbells) m.queue->space_bell().ring();
        return true;
    }
    // Pops up to `max` items of `n` words tagged `tag` from the runs at the head of a queue
    // (TileQueue::try_pop_items: a message whose payload is one or more items), written as
    // bytes; on_run(source, items) for each run taken from. (Shared memory only: the credit
    // interfaces use it.)
    template <typename OnRun>
    uint32_t try_pop_items(const Mailbox& m, Tag tag, uint32_t n, uint32_t max, void* payload, bool& stray,
                           OnRun&& on_run) {
        constexpr uint64_t kTag = 0x0000'0000'ffff'0000ull;  // see detail/header_word.hpp
        const uint32_t got = m.queue->try_pop_items(detail::pack_header(0, tag, 0), kTag, n, max, payload, stray,
                                                    [&](uint64_t header, uint32_t items) {
                                                        on_run(detail::unpack_header(header).source, items);
                                                    });
        if (got != 0 && config_.doorbells) m.queue->space_bell().ring();
        return got;
    }

    QueueCounters counters(TileId tile, uint32_t queue_index) const;
    uint64_t queued_words(TileId tile, uint32_t queue_index) const;

    // Where a pop of (tile, queue) parks while the queue is empty: rung by every push into
    // it when `doorbells` is on; nullptr when it is off.
    Doorbell* data_bell(TileId tile, uint32_t queue_index) {
        detail::check_queue(config_, kBackend, tile, queue_index, true);
        return config_.doorbells ? &queue(tile, queue_index).data_bell() : nullptr;
    }

    // Claims (tile, queue) for one interface whose sender is `sender`: from then on only
    // `sender` may push there (others get std::logic_error), its pushes skip the CAS, and its
    // credited pushes the room check. Throws std::invalid_argument when the queue is claimed
    // already. Credit interfaces claim the queues they own; claim before traffic starts.
    void claim(TileId tile, uint32_t queue_index, TileId sender);
    // Claims (tile, queue) for credit interfaces that share it (many senders into one
    // receive interface): every push there must spend a credit (uncredited ones get
    // std::logic_error), so each reserves its words with one fetch_add and no room check.
    // Any number of such claims may hold a queue; std::invalid_argument when one sender
    // claimed it. Claim before traffic starts.
    void claim_credited(TileId tile, uint32_t queue_index);
    void release_claim(TileId tile, uint32_t queue_index);  // undoes one claim of either kind

    // Room set aside by credit interfaces (see detail::QueueLedger).
    detail::QueueLedger& ledger() { return ledger_; }

    // The slots of `tile`'s queues as bound at construction (queue index order, the catch-all
    // last; each with the kernel's refusal, if any); empty when the tile has no place.
    const std::vector<tp::detail::NodeMemoryPlacement::Area>& bound_slots(TileId tile) const { return bound_.at(tile); }

private:
    TileQueue& queue(TileId tile, uint32_t q) { return *queues_[size_t{tile} * (config_.queues + 1) + q]; }
    const TileQueue& queue(TileId tile, uint32_t q) const { return *queues_[size_t{tile} * (config_.queues + 1) + q]; }

    NetworkConfig config_;
    std::vector<std::unique_ptr<TileQueue>> queues_;  // tile * (queues + 1) + queue
    std::vector<TagTable> tags_;
    detail::QueueLedger ledger_;
    std::vector<std::vector<tp::detail::NodeMemoryPlacement::Area>> bound_;  // per tile
};

}  // namespace tp::noc
