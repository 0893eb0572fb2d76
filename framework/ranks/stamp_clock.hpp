// StampClock: carries a latency sample's entry stamp between ranks.
//
// The stamp is a TSC reading, which means nothing on another host, so it crosses a link as its
// age: the sending end turns it into system-clock nanoseconds against one (TSC, system clock)
// reading per message, and the receiving end back into its own TSC against its own reading. The
// stamp keeps its accuracy (the error is the age times the error of the TSC rate, nanoseconds
// for a packet microseconds old); between hosts a sample also carries the offset between their
// system clocks (what NTP leaves).
#pragma once

#include <rte_cycles.h>
#include <time.h>

#include <cstdint>

namespace tp {

class StampClock {
public:
    // Now, on this host.
    StampClock() : StampClock(rte_rdtsc(), system_ns_now(), static_cast<double>(rte_get_tsc_hz())) {}
    // A reading taken elsewhere: `tsc` and `system_ns` at one instant, the TSC at `tsc_hz`.
    StampClock(uint64_t tsc, int64_t system_ns, double tsc_hz)
        : tsc_(tsc), ns_(system_ns), ns_per_tick_(tsc_hz > 0 ? 1e9 / tsc_hz : 0.0) {}

    // A TSC reading of this host (at or before the clock's) on the system clock.
    int64_t to_system_ns(uint64_t tsc) const {
        const uint64_t age = tsc < tsc_ ? tsc_ - tsc : 0;
        return ns_ - static_cast<int64_t>(static_cast<double>(age) * ns_per_tick_);
    }
    // A system-clock time as this host's TSC; one from the future (another host's clock ahead
    // of this one's) is taken as the clock's own reading.
    uint64_t to_tsc(int64_t system_ns) const {
        const double age = system_ns < ns_ && ns_per_tick_ > 0 ? static_cast<double>(ns_ - system_ns) / ns_per_tick_ : 0.0;
        return age < static_cast<double>(tsc_) ? tsc_ - static_cast<uint64_t>(age) : 0;
    }

    static int64_t system_ns_now() {
        timespec t{};
        clock_gettime(CLOCK_REALTIME, &t);
        return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
    }

private:
    uint64_t tsc_;
    int64_t ns_;
    double ns_per_tick_;
};

}  // namespace tp
