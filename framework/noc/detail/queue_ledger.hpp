// QueueLedger: what credit interfaces have arranged with each queue, kept by both
// backends: the words set aside (so that a credit always stands for room in the destination
// queue) and the sole sender a queue is claimed by (so the shared-memory backend can skip
// the CAS). The checks that the range arguments of push/pop need live here too; their
// throwing halves are out of line so the fast paths stay small.
// Thread-safety: every call may come from any thread (one mutex; none is on a fast path).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "framework/noc/network_config.hpp"

namespace tp::noc::detail {

inline constexpr uint32_t kAnySender = ~0u;
// A queue shared by credit interfaces only: every push into it spends a credit whose room is
// set aside, so pushes need no room check (TileQueue::push_credited_shared_many), and a push
// without a credit is refused.
inline constexpr uint32_t kCreditedSenders = ~0u - 1;

class QueueLedger {
public:
    QueueLedger(const NetworkConfig& config, const char* backend);

    // Sets `words` of (tile, queue) aside for `who`; throws std::invalid_argument saying how
    // much `who` needs, how much the queue holds and how much others set aside already,
    // followed by `hint` (the bound the caller's parameters must meet).
    void reserve(TileId tile, uint32_t queue, uint64_t words, const std::string& who, const std::string& hint = "");
    void release(TileId tile, uint32_t queue, uint64_t words);
    uint64_t reserved(TileId tile, uint32_t queue) const;

    // Records that (tile, queue) belongs to one interface whose sender is `sender`. Throws
    // std::invalid_argument when the queue is claimed already: a credited push relies on
    // being the only traffic there (see TileQueue::push_credited).
    void claim(TileId tile, uint32_t queue, TileId sender);
    // Records that every push into (tile, queue) spends a credit (kCreditedSenders); any
    // number of interfaces may claim a queue so, none may claim it for one sender.
    void claim_credited(TileId tile, uint32_t queue);
    // Undoes one claim; returns who the queue is claimed by now (kAnySender once no claim is left).
    uint32_t release_claim(TileId tile, uint32_t queue);

private:
    size_t index(TileId tile, uint32_t queue) const { return size_t{tile} * (config_.queues + 1) + queue; }

    const NetworkConfig config_;
    const char* backend_;
    mutable std::mutex m_;
    std::vector<uint64_t> reserved_;  // guarded by m_
    std::vector<uint32_t> sole_;      // guarded by m_: claiming sender, kCreditedSenders or kAnySender
    std::vector<uint32_t> credited_;  // guarded by m_: claims of kCreditedSenders
};

// Argument checks: throw std::out_of_range / std::invalid_argument naming the bad value.
[[noreturn]] void throw_bad_push(const NetworkConfig& c, const char* backend, TileId from, TileId to, uint32_t length);
[[noreturn]] void throw_bad_queue(const NetworkConfig& c, const char* backend, TileId tile, uint32_t queue);
[[noreturn]] void throw_claimed(const char* backend, TileId from, TileId to, uint32_t queue, uint32_t sole);

inline void check_push(const NetworkConfig& c, const char* backend, TileId from, TileId to, uint32_t length) {
    if (from >= c.tiles || to >= c.tiles || length > c.max_payload) throw_bad_push(c, backend, from, to, length);
}
// `queue` may be the catch-all (== c.queues) when `with_catch_all`.
inline void check_queue(const NetworkConfig& c, const char* backend, TileId tile, uint32_t queue, bool with_catch_all) {
    if (tile >= c.tiles || queue > c.queues || (!with_catch_all && queue == c.queues))
        throw_bad_queue(c, backend, tile, queue);
}
// A push from `from` into a queue claimed by `sole`.
inline void check_sender(const char* backend, TileId from, TileId to, uint32_t queue, uint32_t sole) {
    if (sole != kAnySender && sole != from) throw_claimed(backend, from, to, queue, sole);
}

}  // namespace tp::noc::detail
