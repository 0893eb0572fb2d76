// WaitPolicy: how a thread waits for a channel to have items (receiver) or room (sender).
//
// Three phases, in this order, each ending as soon as an attempt succeeds:
//  1. spin: `spin_rounds` attempts separated by a CPU pause: the lowest latency while the
//     other side is running on another CPU;
//  2. yield: `yield_rounds` attempts separated by sched_yield: hands this CPU to another
//     runnable thread, which is what keeps a run with more threads than CPUs progressing (a
//     pure spin there burns the time slice the other side needs and collapses throughput);
//  3. park: sleep on a futex (Doorbell) until the other side rings it after making progress,
//     with `park_timeout` as a safety net; without a doorbell, nap `nap_without_bell`.
// The defaults spin for a few microseconds and yield a few times before sleeping. A policy
// is a plain value, safe to share between threads; `wait` is reentrant.
#pragma once

#include <chrono>
#include <cstdint>

#include "framework/runtime/doorbell.hpp"

namespace tp {

// One CPU pause (x86 `pause`, Arm `yield`): tells the core this is a spin loop.
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    asm volatile("yield" ::: "memory");
#else
    asm volatile("" ::: "memory");
#endif
}

// Gives the CPU to another runnable thread (sched_yield).
void yield_cpu();

// Sleeps the calling thread for about `d`.
void nap(std::chrono::microseconds d);

struct WaitPolicy {
    uint32_t spin_rounds = 128;
    uint32_t yield_rounds = 16;
    std::chrono::microseconds park_timeout{2000};
    std::chrono::microseconds nap_without_bell{50};

    // Calls `attempt()` until it returns true, waiting between failures phase by phase.
    // `park(attempt)` runs the park phase: it must re-check through `attempt` after announcing
    // itself (see park_on) and return true when that re-check succeeded.
    template <typename Attempt, typename Park>
    void wait(Attempt&& attempt, Park&& park) const {
        for (uint32_t round = 0;; ++round) {
            if (attempt()) return;
            if (round < spin_rounds) {
                cpu_pause();
            } else if (round < spin_rounds + yield_rounds) {
                yield_cpu();
            } else if (park(attempt)) {
                return;
            } else {
                round = spin_rounds + yield_rounds;  // stay in the park phase (no wrap-around)
            }
        }
    }
};

// The park phase on a doorbell: announce, re-check, sleep until rung (or the timeout). The
// announcement and the re-check are ordered by Doorbell's fence against the other side's
// publish-then-ring, so a wake-up cannot be lost. Returns true when the re-check succeeded.
template <typename Attempt>
bool park_on(Doorbell* bell, const WaitPolicy& policy, Attempt&& attempt) {
    if (bell == nullptr) {
        nap(policy.nap_without_bell);
        return attempt();
    }
    bell->prepare_park();
    if (attempt()) {
        bell->cancel_park();
        return true;
    }
    bell->park(policy.park_timeout);
    return false;
}

}  // namespace tp
