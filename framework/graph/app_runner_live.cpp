// AppRunner::live_view: the report so far, for live telemetry and interval stats.
#include "framework/graph/app_runner.hpp"

namespace tp {

LiveView AppRunner::live_view() const {
    using clock = std::chrono::steady_clock;
    LiveView v;
    // acquire: pairs with run()'s release, so the scheduler's start time is the one published.
    const int64_t started = started_at_.load(std::memory_order_acquire);
    v.started = started >= 0;
    // acquire inside finished(): every tile's end time and counters are visible once it is true.
    v.finished = v.started && scheduler_->finished();
    const clock::time_point t0{clock::duration(started)};
    const double seconds = !v.started ? 0.0
                           : v.finished ? std::chrono::duration<double>(scheduler_->end_time() - t0).count()
                                        : std::chrono::duration<double>(clock::now() - t0).count();
    v.report = collect(seconds, true);
    for (const Link& l : links_) v.queued.push_back(l.desc ? l.desc->queued() : l.words ? l.words->queued() : -1);
    return v;
}

}  // namespace tp
