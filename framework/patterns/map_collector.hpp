// MapCollector: the collector side of a map. W workers each send one partial-done word per
// task (the task's id, a 64-bit word) on their own sender of an asymmetric interface
// (AsymmetricReceiver<uint64_t>, any transport); a task is complete when all W partials of it
// arrived. Partials of different tasks may interleave (worker 3 may be two tasks ahead of
// worker 5), so the collector keeps a count per task in a ring of `window` entries indexed by
// the task id.
//
// Promises: each task is reported complete exactly once, when its W-th partial is taken. When
// every worker handles tasks in order (as map workers do), tasks complete in id order.
// `window` must cover the tasks that can be incomplete at once (the emitter's in-flight
// limit): a partial for a task whose ring entry still counts another task throws
// std::logic_error rather than miscounting, and so does end of stream with a task incomplete.
// Partials are taken from the asymmetric interface in bursts of up to 32 (one doorbell per
// burst on the sender side) and counted one by one. Thread-safety: one thread, the receiver
// of `partials`. Blocking waits go through WaitPolicy; try_collect never blocks.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp {

class MapCollector {
public:
    // `window` is rounded up to a power of two; throws std::invalid_argument when it is 0.
    MapCollector(AsymmetricReceiver<uint64_t>& partials, uint32_t window)
        : partials_(partials), workers_(partials.senders()) {
        if (window == 0) throw std::invalid_argument("map collector: the task window must be at least 1");
        uint32_t size = 1;
        while (size < window) size <<= 1;
        ring_.resize(size);
        mask_ = size - 1;
    }

    uint32_t workers() const { return workers_; }
    uint32_t window() const { return mask_ + 1; }
    uint64_t completed() const { return completed_; }
    // Tasks with some, but not all, of their partials.
    uint64_t incomplete() const { return incomplete_; }

    // Counts waiting partials until one completes a task: true with its id in `task`; false
    // when no partial is waiting. Never blocks.
    bool try_collect(uint64_t& task) {
        for (;;) {
            if (drain(task)) return true;
            if ((taken_ = partials_.try_recv_burst(buf_, kBurst)) == 0) return false;
        }
    }

    // Waits through `policy` until a task completes: true with its id in `task`; false at end
    // of stream (every worker closed and every partial taken).
    bool next(uint64_t& task, const WaitPolicy& policy = {}) {
        for (;;) {
            if (drain(task)) return true;
            if ((taken_ = recv_burst(partials_, buf_, kBurst, policy)) == 0) {
                if (incomplete_ != 0)
                    throw std::logic_error("map collector: end of stream with " + std::to_string(incomplete_) +
                                           " incomplete task(s)");
                return false;
            }
        }
    }

private:
    static constexpr uint32_t kBurst = 32;  // partials taken per receive

    // Counts the partials received and not yet counted, up to the first that completes a task.
    bool drain(uint64_t& task) {
        while (counted_ < taken_)
            if (count(buf_[counted_++], task)) return true;
        counted_ = taken_ = 0;
        return false;
    }

    struct Entry {
        uint64_t task = 0;
        uint32_t partials = 0;  // 0: free
    };

    bool count(uint64_t id, uint64_t& task) {
        Entry& e = ring_[id & mask_];
        if (e.partials == 0) {
            e.task = id;
            ++incomplete_;
        } else if (e.task != id) {
            throw std::logic_error("map collector: a partial of task " + std::to_string(id) + " arrived while task " +
                                   std::to_string(e.task) + " is still incomplete (window " +
                                   std::to_string(mask_ + 1) + " too small)");
        }
        if (++e.partials != workers_) return false;
        e.partials = 0;
        --incomplete_;
        ++completed_;
        task = id;
        return true;
    }

    AsymmetricReceiver<uint64_t>& partials_;
    const uint32_t workers_;
    std::vector<Entry> ring_;
    uint32_t mask_ = 0;
    uint64_t completed_ = 0;
    uint64_t incomplete_ = 0;
    uint64_t buf_[kBurst];
    uint32_t taken_ = 0, counted_ = 0;  // buf_[counted_..taken_) are still to count
};

}  // namespace tp
