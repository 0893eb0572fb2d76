// What `tilepipe watch` draws: one frame from the telemetry endpoints' replies
// (framework/metrics/telemetry.hpp), the rates over the time since the previous frame.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace tp::cli {

// The replies of one read of a run: /tilepipe/stats, /tilepipe/nodes, /tilepipe/latency.
struct WatchSample {
    nlohmann::json stats, nodes, latency;
};

// What a frame needs of the previous one: the run's time, and per node its counts and busy time.
struct WatchMemory {
    double seconds = -1;  // < 0: no previous frame
    uint64_t delivered = 0;
    std::map<std::string, uint64_t> in, out;
    std::map<std::string, double> busy_s;  // busy share x seconds
};

// Why `now` is not what a tilepipe run publishes (framework/metrics/telemetry.hpp), naming the
// endpoint and field; empty when it is. Another program's telemetry socket (dpdk-testpmd's
// answers null) or a garbled reply is refused with it rather than drawn.
std::string watch_reply_problem(const WatchSample& now);

// The frame's lines (of replies watch_reply_problem() accepted): the run's state and totals, the delivered rate now and on average, the
// latency so far, then one row per node sorted by its busy share over the interval (over the
// run on the first frame and once the run's clock stopped), with its rates in and out and
// drops. Updates `memory` for the next frame.
std::string watch_frame(const WatchSample& now, WatchMemory& memory);

}  // namespace tp::cli
