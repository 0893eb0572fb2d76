// What `tilepipe run` shows while an app runs, besides the progress line: DPDK telemetry
// endpoints answering for the run (framework/metrics/telemetry.hpp) and, with
// `--stats-interval S`, one JSON line per S seconds (framework/metrics/interval_stats.hpp) to
// `--stats-out FILE` or stderr; with `--metrics [ADDR:]PORT`, the Prometheus endpoint and the live
// page (framework/metrics/metrics_server.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "framework/graph/app_runner.hpp"
#include "framework/metrics/interval_stats.hpp"
#include "framework/metrics/metrics_server.hpp"
#include "framework/metrics/telemetry.hpp"

namespace tp::cli {

struct LiveRunArgs {
    double stats_interval = 0;  // seconds; 0: no interval lines
    std::string stats_out;      // empty: stderr
    std::string metrics;        // --metrics [ADDR:]PORT; empty: no server
    bool metrics_public = false;  // --metrics-public: an address that is not a loopback one
};

// --stats-interval (a positive number of seconds, else a usage error) and --stats-out.
void add_live_options(CLI::App* cmd, LiveRunArgs& args);

using StatsFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Opens --stats-out before anything starts, so a file that cannot be written is a usage error
// naming it; sets `error` then. No --stats-out: a null file (the lines go to stderr).
StatsFile open_stats_out(const LiveRunArgs& args, std::string& error);

// With --metrics, the server listening where it says (before EAL starts: an address in use or
// refused is a usage error); null without. Sets `error` (one line) when it cannot listen, and
// says where it listens on stderr otherwise.
std::unique_ptr<MetricsServer> start_metrics(const LiveRunArgs& args, const std::string& app, std::string& error);

// Publishes `runner` to the telemetry endpoints and the metrics server (may be null) and starts
// the interval lines; made before runner.run(), finished (or destroyed) after it and before the
// runner goes.
class LiveRun {
public:
    LiveRun(const AppRunner& runner, const LiveRunArgs& args, std::FILE* stats_out, MetricsServer* metrics);
    // Unpublishes the runner from the metrics server unless finish() handed it the report.
    ~LiveRun();
    // Writes the last interval line and hands the metrics server the final report, which it
    // answers from until it stops; the telemetry endpoints keep answering for the finished
    // run until this object is destroyed.
    void finish(const RunReport& report);
    // After finish(): why the --stats-interval lines could not all be written; empty if they were.
    std::string stats_error() const { return stats_ ? stats_->write_error() : std::string(); }

private:
    LiveTelemetry telemetry_;
    std::optional<IntervalStats> stats_;
    MetricsServer* metrics_;
    bool finished_ = false;
};

}  // namespace tp::cli
