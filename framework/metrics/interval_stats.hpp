// IntervalStats: while a run lasts, one JSON line per interval (`tilepipe run --stats-interval S`)
// with the run report's fields for that interval alone: counts are what happened in it, rates
// and busy shares are over it. Each line also has `interval` (1, 2, ...), `t` (seconds from the
// start of the run to the end of the interval) and, per channel, `queued` (items in it at the
// end of the interval, -1 where the transport cannot tell). `latency_us` covers the samples
// taken in the interval (see latency_delta). Fields that describe the whole run (header,
// setup_s, unaccounted, pools, pools_full, failures) are left out. The last line covers what is
// left after the last full interval, so the lines' counts add up to the final report's.
//
// A thread of its own takes the views (see live_view.hpp: relaxed loads, no tile waits) and
// writes the lines; nothing else writes to `out` meanwhile.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <nlohmann/json_fwd.hpp>

#include "framework/metrics/live_view.hpp"

namespace tp {

class IntervalStats {
public:
    // Starts the writer; `seconds` > 0. `out` stays open until finish() returned.
    IntervalStats(LiveSource source, double seconds, std::FILE* out);
    ~IntervalStats();  // finish()
    IntervalStats(const IntervalStats&) = delete;
    IntervalStats& operator=(const IntervalStats&) = delete;

    // After the run: writes the last partial interval and stops the writer. Call it while the
    // source can still be read.
    void finish();
    // After finish(): why the lines could not all be written (a full disk, a closed pipe), the
    // first failure; empty when they were. The lines stop at the first.
    const std::string& write_error() const { return error_; }

private:
    void loop();
    void write_line(const LiveView& now);

    const LiveSource source_;
    const double seconds_;
    std::FILE* const out_;
    RunReport last_;  // the view the previous line ended at (zeros before the first)
    int lines_ = 0;
    std::string error_;  // the writer's, read after the join
    std::mutex m_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread writer_;
};

// The JSON line for `delta` (what report_delta made), its index and end time `t`.
nlohmann::json interval_json(const RunReport& delta, int interval, double t, const std::vector<int64_t>& queued);

}  // namespace tp
