// LiveView: what a run has done so far, taken while it lasts, for the live telemetry endpoints
// and the per-interval stats lines.
//
// A view is built on a thread that is not a tile's (DPDK's telemetry thread, the interval
// writer) from relaxed atomic loads of the tiles' counters: each value may be a few bursts
// old, none is torn, and no tile ever waits for a reader. Values read at slightly different
// moments need not add up (a sink's count may already include a packet the source's count,
// read earlier, does not), so a view carries no `unaccounted`. What is only safe to read after
// the tiles were joined (per-port counts, failures) is left out; the pools' fill is DPDK's
// lock-free count, as stale as the counters.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "framework/metrics/run_report.hpp"

namespace tp {

struct LiveView {
    bool started = false;   // the run's clock has started
    bool finished = false;  // every tile is done
    RunReport report;       // counters so far; `seconds` is the time since the clock started
    // Per report.channels entry: items queued in the channel now, -1 where the transport
    // cannot tell without taking the sender's or receiver's side.
    std::vector<int64_t> queued;
};

// Builds a view of the run now; callable from any thread while the run's owner lets it.
using LiveSource = std::function<LiveView()>;

// What happened between two views of one run (`before` taken first): counts are differences,
// `seconds` is the time between them, and each busy share is the share of that time. Latency:
// the end-to-end histogram's buckets filled in between, summarised (latency_delta); per-node
// residence is the final report's only.
RunReport report_delta(const RunReport& now, const RunReport& before);

// The samples `now` holds beyond `before` (bucket by bucket), with percentiles, max and mean
// taken from the buckets' upper bounds (within 1/128 of the true values).
LatencyReport latency_delta(const LatencyReport& now, const LatencyReport& before);

}  // namespace tp
