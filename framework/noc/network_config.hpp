// The vocabulary both messaging-network backends share (MessageNetwork on shared memory,
// EventdevNetwork on a DPDK event device): the network's shape, a message header, the
// per-queue counters, and the one validation both apply.
//
// A tile owns `queues` demux queues plus a catch-all (index `queues`), each holding up to
// `queue_words` words. A message is a header (source tile, tag, length) and up to
// `max_payload` payload words; in a queue it takes 1 + length words, so with the defaults a
// 127-word message fills a 128-word queue, as on the TILEPro64's UDN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tp {
class Topology;
}

namespace tp::noc {

using TileId = uint32_t;
using Tag = uint16_t;

// Longest payload any network carries (the UDN's limit): callers of pop() provide this much room.
inline constexpr uint32_t kMaxPayload = 127;
// Words a credit message takes in a queue: a header and the count it returns (see
// detail/credit_setup.hpp); a sender's ack queue sets aside kCreditWords x K words.
inline constexpr uint32_t kCreditWords = 2;
// Credits a receiver returns to a sender of K in one message (CreditReceiver): a quarter of K,
// at least one. 75 % of a sender's window stays open, for a quarter of the credit messages.
constexpr uint32_t credit_batch(uint32_t credits) { return credits / 4 > 1 ? credits / 4 : 1; }
// Largest queue a network accepts, in words.
inline constexpr uint32_t kMaxQueueWords = 1u << 26;

struct MessageHeader {
    TileId source = 0;
    Tag tag = 0;
    uint32_t length = 0;  // payload words
};

struct NetworkConfig {
    uint32_t tiles = 2;
    uint32_t queues = 4;          // demux queues per tile; the catch-all comes on top
    uint32_t queue_words = 128;   // capacity of each queue in words, header included; a power of two
    // Per queue (index tile * (queues + 1) + queue, the catch-all last), when queues differ:
    // each a power of two, at least max_payload + 1; empty: every queue holds queue_words.
    // An app's network sizes each queue to the credits it carries (network.queue_words: auto).
    std::vector<uint32_t> queue_sizes;
    // Longest payload accepted, at most queue_words - 1; 0: as long as the queue allows, up to
    // kMaxPayload (a network's config() shows the value it resolved to).
    uint32_t max_payload = 0;
    // Ring a doorbell after every push and pop so that a parked push()/pop() wakes at once
    // (one fence per operation). Off, a parked caller naps briefly and polls again: the
    // choice of interfaces that bring their own doorbells (the `udn` channel transport).
    bool doorbells = true;
    // The eventdev backend's device: events it holds at once (nb_events_limit); 0: as many as
    // it offers. A smaller one refuses pushes sooner, as a hardware queue manager's own limit
    // does. At least what the ports may keep in their credit caches, plus one quantum
    // (EventdevNetwork checks), so a refused push always succeeds again. Ignored elsewhere.
    uint32_t device_events = 0;

    // Words (tile, queue) holds; `queue` may be the catch-all (== queues).
    uint32_t words_of(TileId tile, uint32_t queue) const {
        return queue_sizes.empty() ? queue_words : queue_sizes[size_t{tile} * (queues + 1) + queue];
    }
    // The largest queue (queue_words when all are alike).
    uint32_t largest_queue() const;

    // One tile per tile of `topology`, the other fields at their defaults.
    static NetworkConfig for_topology(const Topology& topology);
};

// What a queue has carried: messages and payload words popped, and pushes refused because
// the queue was full (a blocking push that had to wait counts once).
struct QueueCounters {
    uint64_t messages = 0;
    uint64_t words = 0;
    uint64_t stalls = 0;
};

// `config` with max_payload resolved; throws std::invalid_argument naming `backend` and the
// rule a field breaks.
NetworkConfig validated(NetworkConfig config, const char* backend);

}  // namespace tp::noc
