// `tilepipe run` and `tilepipe validate`: load an app config, apply command-line overrides,
// and (for run) start EAL, run the app, print the report.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "apps/tilepipe/app_args.hpp"
#include "apps/tilepipe/commands.hpp"
#include "apps/tilepipe/live_run.hpp"
#include "framework/config/app_config.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/runtime/stop_request.hpp"

namespace tp::cli {

namespace {

struct RunArgs {
    AppArgs app;
    std::string json_out;
    std::string eal;
    bool quiet = false;
    LiveRunArgs live;
};

int run(const RunArgs& args) {
    AppConfig app;
    std::optional<AppPlan> plan;
    try {
        app = load_app(args.app);
        plan = plan_app(app);  // placement errors are config errors: report them before EAL
    } catch (const LocatedError& e) {
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitUsage;
    }
    std::ofstream json_file;
    if (!args.json_out.empty()) {
        json_file.open(args.json_out);
        if (!json_file) {
            std::fprintf(stderr, "tilepipe: --json %s: cannot write: %s\n", args.json_out.c_str(),
                         std::strerror(errno));
            return kExitUsage;
        }
    }
    std::string stats_error;
    const StatsFile stats_file = open_stats_out(args.live, stats_error);
    if (!stats_error.empty()) {
        std::fprintf(stderr, "tilepipe: %s\n", stats_error.c_str());
        return kExitUsage;
    }
    RunReport report;
    try {
        EalOptions eal = eal_options_for(app, *plan);
        eal.user_args = args.eal;
        eal.verbose = spdlog::get_level() <= spdlog::level::debug;
        const EalInfo& info = eal_start(eal);
        std::string argv;
        for (const auto& a : info.argv) argv += " " + a;
        spdlog::debug("EAL started:{}", argv);

        install_stop_signal_handlers();
        AppRunner runner(app, std::move(*plan));
        spdlog::debug("app {}: {} on {} thread(s)", app.name, describe(app), runner.threads());
        RunOptions opts;
        if (!args.quiet)
            opts.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
        LiveRun live(runner, args.live, stats_file.get());
        report = runner.run(opts);
        live.finish();
        // The runner (and its stages, channels and pools) is gone before the report prints.
    } catch (const LocatedError& e) {
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitRuntime;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitRuntime;
    }
    std::fputs(format_table(report).c_str(), stdout);
    bool json_written = true;
    if (json_file.is_open()) {
        json_file << to_json(report).dump(2) << '\n';
        json_file.close();
        if (json_file.fail()) {
            json_written = false;
            std::fprintf(stderr, "tilepipe: --json %s: cannot write the report: %s\n", args.json_out.c_str(),
                         std::strerror(errno));
        }
    }
    for (const FailureReport& f : report.failures)
        std::fprintf(stderr, "tilepipe: node '%s' failed: %s\n", f.node.c_str(), f.error.c_str());
    if (report.unaccounted != 0 || !report.pools_full()) {
        std::fprintf(stderr, "tilepipe: accounting failed: %lld packets unaccounted, pools %s\n",
                     (long long)report.unaccounted, report.pools_full() ? "full" : "not full");
        return kExitAccounting;
    }
    return report.failures.empty() && json_written ? kExitOk : kExitRuntime;
}

}  // namespace

void add_run(CLI::App& app, Action& action) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* cmd = app.add_subcommand("run", "run an app and report its throughput");
    add_app_options(cmd, args->app);
    cmd->add_option("--json", args->json_out, "also write the report as JSON to OUT");
    cmd->add_flag("--quiet", args->quiet, "no progress line on stderr");
    add_live_options(cmd, args->live);
    cmd->add_option("--eal", args->eal, "extra DPDK EAL arguments, passed through (e.g. \"--vdev net_null0\")");
    cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

void add_validate(CLI::App& app, Action& action) {
    auto args = std::make_shared<AppArgs>();
    CLI::App* cmd = app.add_subcommand("validate", "check an app config (and overrides) without running it");
    add_app_options(cmd, *args);
    cmd->callback([args, &action] {
        action = [args] {
            try {
                const AppConfig app = load_app(*args);
                plan_app(app);
                std::printf("%s: ok: %s\n", args->conf.c_str(), describe(app).c_str());
                return kExitOk;
            } catch (const LocatedError& e) {
                std::fprintf(stderr, "tilepipe: %s\n", e.what());
                return kExitUsage;
            }
        };
    });
}

}  // namespace tp::cli
