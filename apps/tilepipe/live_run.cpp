#include "apps/tilepipe/live_run.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>

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
        ->needs(interval);
}

StatsFile open_stats_out(const LiveRunArgs& args, std::string& error) {
    if (args.stats_out.empty()) return StatsFile(nullptr, std::fclose);
    StatsFile f(std::fopen(args.stats_out.c_str(), "w"), std::fclose);
    if (!f) error = "--stats-out " + args.stats_out + ": cannot write: " + std::strerror(errno);
    return f;
}

LiveRun::LiveRun(const AppRunner& runner, const LiveRunArgs& args, std::FILE* stats_out)
    : telemetry_([&runner] { return runner.live_view(); }) {
    if (args.stats_interval > 0)
        stats_.emplace([&runner] { return runner.live_view(); }, args.stats_interval,
                       stats_out != nullptr ? stats_out : stderr);
}

void LiveRun::finish() {
    if (stats_) stats_->finish();
}

}  // namespace tp::cli
