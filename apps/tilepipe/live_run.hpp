// What `tilepipe run` shows while an app runs, besides the progress line: DPDK telemetry
// endpoints answering for the run (framework/metrics/telemetry.hpp) and, with
// `--stats-interval S`, one JSON line per S seconds (framework/metrics/interval_stats.hpp) to
// `--stats-out FILE` or stderr.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "framework/graph/app_runner.hpp"
#include "framework/metrics/interval_stats.hpp"
#include "framework/metrics/telemetry.hpp"

namespace tp::cli {

struct LiveRunArgs {
    double stats_interval = 0;  // seconds; 0: no interval lines
    std::string stats_out;      // empty: stderr
};

// --stats-interval (a positive number of seconds, else a usage error) and --stats-out.
void add_live_options(CLI::App* cmd, LiveRunArgs& args);

using StatsFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Opens --stats-out before anything starts, so a file that cannot be written is a usage error
// naming it; sets `error` then. No --stats-out: a null file (the lines go to stderr).
StatsFile open_stats_out(const LiveRunArgs& args, std::string& error);

// Publishes `runner` to the telemetry endpoints and starts the interval lines; made before
// runner.run(), finished (or destroyed) after it and before the runner goes.
class LiveRun {
public:
    LiveRun(const AppRunner& runner, const LiveRunArgs& args, std::FILE* stats_out);
    // Writes the last interval line; the endpoints keep answering for the finished run until
    // this object is destroyed.
    void finish();

private:
    LiveTelemetry telemetry_;
    std::optional<IntervalStats> stats_;
};

}  // namespace tp::cli
