// Doorbell: how an idle OS thread sleeps without missing work, and how producers wake it.
//
// The sleeper announces itself (`prepare_park`), re-checks every input, then `park`s on a
// futex; a producer that made work visible calls `ring`. Both sides put a seq_cst fence
// between their store (parked flag / published data) and their load (data / parked flag):
// the Dekker pattern, so at least one of them sees the other and no wake-up is lost. The
// fence costs a few tens of cycles per burst on the producer side; `park` also times out
// as a safety net, so a bug here would cost latency, never a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tp {

class Doorbell {
public:
    // Producer side, after publishing work (a burst, an end of stream, freed room).
    void ring() {
        std::atomic_thread_fence(std::memory_order_seq_cst);  // publish before reading `parked_`
        // relaxed: the fence above orders it after the publish (Dekker, see the top).
        if (parked_.load(std::memory_order_relaxed) != 0) wake();
    }

    // Producer side without a fence, for producers that ring after every single send: on a
    // doorbell made light (make_light), the sleeper pays for the ordering instead. The
    // Dekker pattern needs a full barrier on both sides between store and load; here the
    // producer keeps only the compiler's order (a signal fence: its data store is issued
    // before its load of `parked_`) and the sleeper's membarrier(PRIVATE_EXPEDITED), made
    // between announcing and re-checking, runs a full barrier on every CPU running a thread
    // of this process (a thread not running passed one when it was switched out). So a
    // producer whose load of `parked_` preceded that barrier had its data store drained by it
    // (the sleeper's re-check sees the data), and one whose load came after it sees the
    // announcement (and wakes the sleeper). On a doorbell that is not light, the same as ring().
    void ring_light() {
        // relaxed: a flag set once, read on every ring; see heavy_barrier().
        if (!light_ || light_failed_.load(std::memory_order_relaxed)) return ring();
        std::atomic_signal_fence(std::memory_order_seq_cst);  // compiler order only: see above
        // relaxed: ordered against the sleeper by its membarrier (see above).
        if (parked_.load(std::memory_order_relaxed) != 0) wake();
    }
    // Producer side, when the producer already put a seq_cst fence between its publish and
    // this call: one fence serves every doorbell a burst rings (a receive that freed credits
    // of several senders). The Dekker argument is ring()'s.
    void ring_fenced() {
        // relaxed: ordered after the publish by the caller's fence (Dekker, see the top).
        if (parked_.load(std::memory_order_relaxed) != 0) wake();
    }

    // Moves the ordering cost of ring_light() to the sleeper; true when the kernel offers
    // private expedited membarrier (else ring_light() stays a ring()). Call before the
    // threads that use this doorbell start.
    bool make_light();
    // True while ring_light() goes without a fence: made light, and no membarrier has failed
    // since (relaxed: a one-way flag, see heavy_barrier()).
    bool light() const { return light_ && !light_failed_.load(std::memory_order_relaxed); }

    // Sleeper side: announce, then re-check inputs, then park (or cancel if work appeared).
    void prepare_park() {
        parks_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic, written by the sleeper only
        parked_.store(1, std::memory_order_relaxed);  // relaxed: ordered by the barrier below
        if (light_) heavy_barrier();  // every running thread's barrier: see ring_light()
        else std::atomic_thread_fence(std::memory_order_seq_cst);  // announce before re-checking inputs
    }
    // relaxed: withdrawing the announcement publishes nothing; at worst a producer still
    // sees 1 and pays for a futex wake that finds no sleeper.
    void cancel_park() { parked_.store(0, std::memory_order_relaxed); }
    // Sleeps until rung, or `timeout` (kRetryNap at most after retry_soon()).
    void park(std::chrono::microseconds timeout);

    // Sleeper side, from the sleeper's own thread: its next park() sleeps kRetryNap at most
    // (a ring still ends it at once). For a sleeper holding work that only its own polling
    // can finish and that nobody will ring for: a push the event device refused (it says
    // nothing when it has room again). Asked for while polling; the next park takes it.
    // relaxed: set and taken by the sleeper's thread only.
    void retry_soon() { retry_soon_.store(true, std::memory_order_relaxed); }
    static constexpr std::chrono::microseconds kRetryNap{50};

    // Announcements to sleep (each costs the sleeper a barrier: on a light doorbell a
    // membarrier, an interrupt of every CPU running this process). relaxed: a statistic.
    uint64_t parks() const { return parks_.load(std::memory_order_relaxed); }
    // relaxed: a statistic, read after the threads joined (join orders it).
    uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }
    // Parks that slept out their whole timeout (nobody rang): each is a wake-up lost or never
    // due. relaxed: a statistic, written by the sleeper only.
    uint64_t park_timeouts() const { return park_timeouts_.load(std::memory_order_relaxed); }
    // Parks shortened by retry_soon() that napped their whole kRetryNap (not park_timeouts:
    // nobody was due to ring). relaxed: a statistic, written by the sleeper only.
    uint64_t retry_naps() const { return retry_naps_.load(std::memory_order_relaxed); }

private:
    void wake();
    static void heavy_barrier();
    // Set when a membarrier fails at run time: every ringer fences again from then on (and
    // the failure is logged once), instead of leaving ring_light() unordered.
    static std::atomic<bool> light_failed_;
    bool light_ = false;
    alignas(64) std::atomic<uint32_t> parked_{0};
    std::atomic<uint64_t> parks_{0};
    std::atomic<uint64_t> wakeups_{0};
    std::atomic<uint64_t> park_timeouts_{0};
    std::atomic<uint64_t> retry_naps_{0};
    std::atomic<bool> retry_soon_{false};
};

}  // namespace tp
