// AppRunner::live_view: the report so far, for live telemetry and interval stats.
#include "framework/graph/app_runner.hpp"

namespace tp {

LiveView AppRunner::live_view() const {
    LiveView v;
    // acquire: pairs with run()'s release once the threads were started.
    v.started = started_at_.load(std::memory_order_acquire) >= 0;
    // acquire inside finished(): every tile's counters are final once it is true.
    v.finished = v.started && scheduler_->finished();
    // The windows so far (first emit to now), or the report's own once every tile is done.
    v.report = collect(0.0, true);
    for (const Link& l : links_) v.queued.push_back(l.desc ? l.desc->queued() : l.words ? l.words->queued() : -1);
    return v;
}

}  // namespace tp
