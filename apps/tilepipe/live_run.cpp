#include "apps/tilepipe/live_run.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "apps/tilepipe/commands.hpp"
#include "tilepipe_version.h"

namespace tp::cli {

void add_live_options(CLI::App* cmd, LiveRunArgs& args) {
    CLI::Option* interval =
        cmd->add_option("--stats-interval", args.stats_interval,
                        "while the run lasts, write one JSON line per S seconds: the report's fields for that "
                        "interval (counts, rates, busy shares), to --stats-out or stderr")
            ->type_name("S")
            ->check(CLI::Validator(
                [](std::string& s) -> std::string {
                    char* end = nullptr;
                    const double v = std::strtod(s.c_str(), &end);
                    if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0)
                        return "must be a positive number of seconds, got '" + s + "'";
                    return "";
                },
                "SECONDS > 0"));
    cmd->add_option("--stats-out", args.stats_out, "write the --stats-interval lines to FILE instead of stderr")
        ->type_name("FILE")
        ->check(not_empty())
        ->needs(interval);
    CLI::Option* metrics =
        cmd->add_option("--metrics", args.metrics,
                        "while the run lasts, serve Prometheus metrics at http://ADDR:PORT/metrics and a live page "
                        "at http://ADDR:PORT/ (ADDR: 127.0.0.1 unless given; PORT 0: any free one)")
            ->type_name("[ADDR:]PORT")
            ->check(not_empty());
    cmd->add_flag("--metrics-public", args.metrics_public,
                  "let --metrics listen on an address that is not a loopback one (open to the network)")
        ->needs(metrics);
}

std::unique_ptr<MetricsServer> start_metrics(const LiveRunArgs& args, const std::string& app, std::string& error) {
    if (args.metrics.empty()) return nullptr;
    MetricsAddress at;
    error = parse_metrics_address(args.metrics, args.metrics_public, at);
    if (!error.empty()) return nullptr;
    try {
        auto server = std::make_unique<MetricsServer>(at, app, TILEPIPE_VERSION);
        const std::string base = "http://" + server->host() + ":" + std::to_string(server->port());
        std::fprintf(stderr, "tilepipe: metrics at %s/metrics, live page at %s/\n", base.c_str(), base.c_str());
        return server;
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

StatsFile open_stats_out(const LiveRunArgs& args, std::string& error) {
    if (args.stats_out.empty()) return StatsFile(nullptr, std::fclose);
    StatsFile f(std::fopen(args.stats_out.c_str(), "w"), std::fclose);
    if (!f) error = "--stats-out " + args.stats_out + ": cannot write: " + std::strerror(errno);
    return f;
}

LiveRun::LiveRun(const AppRunner& runner, const LiveRunArgs& args, std::FILE* stats_out, MetricsServer* metrics)
    : telemetry_([&runner] { return runner.live_view(); }), metrics_(metrics) {
    if (args.stats_interval > 0)
        stats_.emplace([&runner] { return runner.live_view(); }, args.stats_interval,
                       stats_out != nullptr ? stats_out : stderr);
    if (metrics_ != nullptr) metrics_->publish([&runner] { return runner.live_view(); });
}

LiveRun::~LiveRun() {
    if (metrics_ != nullptr && !finished_) metrics_->publish(nullptr);  // the runner goes
}

void LiveRun::finish(const RunReport& report) {
    if (stats_) stats_->finish();
    if (metrics_ != nullptr) metrics_->publish_final(report);
    finished_ = true;
}

}  // namespace tp::cli
