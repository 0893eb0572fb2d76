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

#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/noc/tag_table.hpp"
#include "framework/noc/tile_queue.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc {

class MessageNetwork {
public:
    static constexpr const char* kBackend = "shared_memory";

    explicit MessageNetwork(const NetworkConfig& config);  // throws std::invalid_argument
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
        detail::check_push(config_, kBackend, from, to, length);
        const uint32_t qi = tags_[to].queue_of(tag);
        TileQueue& q = queue(to, qi);
        const uint32_t sole = q.sole_sender();
        detail::check_sender(kBackend, from, to, qi, sole);
        if (!q.try_push(sole == from, detail::pack_header(from, tag, length), payload, length)) {
            q.count_stall();
            return false;
        }
        if (config_.doorbells) q.data_bell().ring();
        return true;
    }
    void push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length, const WaitPolicy& policy = {});

    // `payload` must have room for max_payload words (kMaxPayload always suffices).
    bool try_pop(TileId tile, uint32_t queue_index, MessageHeader& header, uint64_t* payload) {
        detail::check_queue(config_, kBackend, tile, queue_index, true);
        TileQueue& q = queue(tile, queue_index);
        uint64_t word;
        if (!q.try_pop(word, payload)) return false;
        header = detail::unpack_header(word);
        if (config_.doorbells) q.space_bell().ring();
        return true;
    }
    void pop(TileId tile, uint32_t queue_index, MessageHeader& header, uint64_t* payload, const WaitPolicy& policy = {});

    QueueCounters counters(TileId tile, uint32_t queue_index) const;
    uint64_t queued_words(TileId tile, uint32_t queue_index) const;

    // Where a pop of (tile, queue) parks while the queue is empty: rung by every push into
    // it when `doorbells` is on; nullptr when it is off.
    Doorbell* data_bell(TileId tile, uint32_t queue_index) {
        detail::check_queue(config_, kBackend, tile, queue_index, true);
        return config_.doorbells ? &queue(tile, queue_index).data_bell() : nullptr;
    }

    // Claims (tile, queue) for `sender`: from then on only `sender` may push there (others
    // get std::logic_error), and its pushes skip the CAS. Counted: a queue stays claimed
    // until every claim is released. Throws std::invalid_argument when another sender holds
    // it. Credit interfaces claim the queues they own; claim before traffic starts.
    void claim(TileId tile, uint32_t queue_index, TileId sender);
    void release_claim(TileId tile, uint32_t queue_index);

    // Room set aside by credit interfaces (see detail::QueueLedger).
    detail::QueueLedger& ledger() { return ledger_; }

private:
    TileQueue& queue(TileId tile, uint32_t q) { return *queues_[size_t{tile} * (config_.queues + 1) + q]; }
    const TileQueue& queue(TileId tile, uint32_t q) const { return *queues_[size_t{tile} * (config_.queues + 1) + q]; }

    NetworkConfig config_;
    std::vector<std::unique_ptr<TileQueue>> queues_;  // tile * (queues + 1) + queue
    std::vector<TagTable> tags_;
    detail::QueueLedger ledger_;
};

}  // namespace tp::noc
