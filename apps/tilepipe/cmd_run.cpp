// `tilepipe run` and `tilepipe validate`: load an app config, apply command-line overrides,
// and (for run) start EAL, run the app, print the report.
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "apps/tilepipe/app_args.hpp"
#include "apps/tilepipe/commands.hpp"
#include "apps/tilepipe/live_run.hpp"
#include "apps/tilepipe/rank_run.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/config/app_config.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/graph/rank_plan.hpp"
#include "framework/graph/run_outcome.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/capture/load_progress.hpp"

namespace tp::cli {

namespace {

struct RunArgs {
    AppArgs app;
    std::string json_out;
    std::string eal;
    bool quiet = false;
    uint32_t trace = 0;  // --trace N
    LiveRunArgs live;
};

// The command-line overrides as a user would type them again.
std::vector<std::string> overrides_of(const AppArgs& a) {
    std::vector<std::string> v;
    const AppOverrides& o = a.overrides;
    if (o.pcap) v.push_back("--pcap " + *o.pcap);
    if (o.loop) v.push_back("--loop " + *o.loop);
    if (o.strict) v.push_back("--strict");
    if (o.limit) v.push_back("--limit " + *o.limit);
    if (o.pps) v.push_back("--pps " + *o.pps);
    if (o.mbps) v.push_back("--mbps " + *o.mbps);
    if (o.multiplier) v.push_back("--multiplier " + *o.multiplier);
    if (o.topology) v.push_back("--topology " + *o.topology);
    if (o.latency) v.push_back("--latency " + *o.latency);
    for (const std::string& s : o.sets) v.push_back("--set " + s);
    return v;
}

// The progress line: redrawn in place on a terminal, one line per interval otherwise (a log).
struct ProgressPrinter {
    bool terminal = isatty(STDERR_FILENO) == 1;
    bool drawn = false;  // a line without its newline is on the terminal
    void print(const std::string& line) {
        if (terminal) std::fprintf(stderr, "\rprogress %s\033[K", line.c_str());
        else std::fprintf(stderr, "progress %s\n", line.c_str());
        std::fflush(stderr);
        drawn = terminal;
    }
    void end() {
        if (drawn) std::fputc('\n', stderr);
        drawn = false;
    }
};

// A source that refuses damaged records (`strict`, --strict) would refuse its capture at the
// first one during the run: validate reads the records to find it first.
void check_strict_captures(const AppConfig& app) {
    for (const NodeConfig& n : app.pipeline)
        if (n.stage->kind == StageKind::Source && n.stage->find_param("strict") != nullptr &&
            n.stage->find_param("file") != nullptr && n.params.get_bool("strict"))
            CaptureFile::check_records(n.params.get_string("file"), n.params.where("file"));
}

// The report as JSON, with the ranks' rows when the app ran as several.
nlohmann::json report_json(const RunReport& r, const RankRun* ranks) {
    nlohmann::json j = to_json(r);
    if (ranks != nullptr) ranks->add_json(j);
    return j;
}

int run(RunArgs args) {
    AppConfig app;
    std::optional<AppPlan> plan;
    std::unique_ptr<RankRun> ranks;  // null: one process
    try {
        ranks = RankRun::launch();  // under mpirun -np R > 1: MPI starts here
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitRuntime;
    }
    std::string config_error;
    try {
        app = load_app(args.app);
        app.trace = args.trace;
        // Every rank must build the same graph (its links are numbered in it), and `fuse: auto`
        // decides by the CPUs of the rank's own host: ranks fold only when told to (`always`).
        if (ranks && app.fuse == "auto") app.fuse = "never";
        // Placement errors are config errors: report them before EAL. A rank checks the
        // parameters of the stages it runs (prepare()): the files they read are on its host.
        plan = plan_app(app, !ranks);
        if (ranks) ranks->prepare(app, *plan);
        else RankRun::check_alone(app, *plan);
    } catch (const LocatedError& e) {
        config_error = e.what();
    }
    // Ranks compare what they found (a host may lack a file the others read): rank 0 says it.
    if (ranks ? !ranks->agree_config(config_error) : !config_error.empty()) {
        if (!ranks) std::fprintf(stderr, "tilepipe: %s\n", config_error.c_str());
        return kExitUsage;
    }
    if (ranks) {
        try {
            ranks->share(app, *plan);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tilepipe: rank %d: %s (runtime.rank_links: messages needs no shared memory)\n",
                         ranks->rank(), e.what());
            return kExitRuntime;
        }
    }
    if (ranks && ranks->rank() != 0) {  // rank 0 reports for all
        args.json_out.clear();
        args.live = LiveRunArgs{};
        args.quiet = true;
    }
    // `--json -`: the JSON goes to standard output, the table to standard error.
    const bool json_to_stdout = args.json_out == "-";
    if (!args.live.stats_out.empty() && !args.json_out.empty() && !json_to_stdout) {
        std::error_code ec1, ec2;  // one would overwrite the other (a path that cannot be resolved: open says why)
        const auto stats = std::filesystem::weakly_canonical(args.live.stats_out, ec1);
        const auto json = std::filesystem::weakly_canonical(args.json_out, ec2);
        if (!ec1 && !ec2 && stats == json) {
            std::fprintf(stderr, "tilepipe: --stats-out %s and --json %s name one file: give each its own\n",
                         args.live.stats_out.c_str(), args.json_out.c_str());
            return kExitUsage;
        }
    }
    std::ofstream json_file;
    if (!args.json_out.empty() && !json_to_stdout) {
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
    // Before EAL starts: an address in use or refused is a usage error, not a failed run. It
    // answers until the report is printed (the end of this function).
    std::string metrics_error;
    const std::unique_ptr<MetricsServer> metrics = start_metrics(args.live, app.name, metrics_error);
    if (!metrics_error.empty()) {
        std::fprintf(stderr, "tilepipe: %s\n", metrics_error.c_str());
        return kExitUsage;
    }
    RunReport report;
    auto progress = std::make_shared<ProgressPrinter>();
    try {
        // Before sizing EAL memory: that reads large captures, and Ctrl-C stops the reading.
        install_stop_signal_handlers(SecondSignal::CutShort);
        LoadProgress::set_enabled(!args.quiet);
        const auto build = [&] {
            EalOptions eal = eal_options_for(app, *plan);
            eal.user_args = args.eal;
            eal.verbose = spdlog::get_level() <= spdlog::level::debug;
            check_pool_memory(app, *plan, eal, eal_memory_available(eal));
            const EalInfo& info = eal_start(eal);
            std::string argv;
            for (const auto& a : info.argv) argv += " " + a;
            spdlog::debug("EAL started:{}", argv);
            return std::make_unique<AppRunner>(app, std::move(*plan), ranks ? ranks->links() : nullptr);
        };
        std::unique_ptr<AppRunner> runner_ptr;
        if (!ranks) {
            runner_ptr = build();
        } else {
            // A rank that cannot start says so to every rank, and none runs.
            std::string error;
            try {
                runner_ptr = build();
            } catch (const std::exception& e) {
                error = e.what();
            }
            if (!ranks->agree_started(error)) return kExitRuntime;
        }
        AppRunner& runner = *runner_ptr;
        spdlog::debug("app {}: {} on {} thread(s)", app.name, describe(app), runner.threads());
        RunOptions opts;
        if (ranks) opts.tick = [&ranks] { ranks->tick(); };
        if (!args.quiet) opts.progress = [progress](const std::string& line) { progress->print(line); };
        if (!ranks || ranks->rank() == 0)  // one notice for all ranks
            opts.notice = [progress](const std::string& line) {
                progress->end();
                std::fprintf(stderr, "tilepipe: %s\n", line.c_str());
            };
        LiveRun live(runner, args.live, stats_file.get(), metrics.get());
        report = runner.run(opts);
        live.finish(report);
        stats_error = live.stats_error();
        progress->end();
        if (ranks) ranks->end_run();
        // The runner (and its stages, channels and pools) is gone before the report prints.
    } catch (const LocatedError& e) {
        progress->end();
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitRuntime;
    } catch (const std::exception& e) {
        progress->end();
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitRuntime;
    }
    if (ranks) ranks->merge(report);
    finish_report(report, app, args.app.conf, overrides_of(args.app));
    if (ranks && ranks->rank() != 0) return ranks->agree_exit(0);
    if (ranks) ranks->agree_exit(report.header.exit_status);
    std::fputs((format_table(report) + (ranks ? ranks->table() : "") + format_trace(report.trace)).c_str(),
               json_to_stdout ? stderr : stdout);
    // Out now, not at exit: the metrics server answers until the report is printed.
    std::fflush(stdout);
    bool json_written = true;
    if (json_to_stdout) {
        std::fflush(stderr);
        std::cout << report_json(report, ranks.get()).dump(2) << '\n' << std::flush;
        json_written = static_cast<bool>(std::cout);
    } else if (json_file.is_open()) {
        json_file << report_json(report, ranks.get()).dump(2) << '\n';
        json_file.close();
        json_written = !json_file.fail();
    }
    if (!json_written)
        std::fprintf(stderr, "tilepipe: --json %s: cannot write the report: %s\n", args.json_out.c_str(),
                     std::strerror(errno));
    for (const FailureReport& f : report.failures)
        std::fprintf(stderr, "tilepipe: node '%s' failed: %s\n", f.node.c_str(), f.error.c_str());
    if (report.header.exit_status == kExitAccounting)
        std::fprintf(stderr, "tilepipe: accounting failed: %lld packets unaccounted, pools %s\n",
                     (long long)report.unaccounted, report.pools_full() ? "full" : "not full");
    if (report.header.interrupted)
        std::fprintf(stderr, "tilepipe: interrupted by %s%s\n",
                     report.header.signal == SIGINT ? "Ctrl-C (SIGINT)" : "SIGTERM",
                     report.header.cut_short ? ", then cut short by a second signal" : "");
    if (!stats_error.empty())
        std::fprintf(stderr, "tilepipe: %s: %s\n",
                     args.live.stats_out.empty() ? "--stats-interval (standard error)" : ("--stats-out " + args.live.stats_out).c_str(),
                     stats_error.c_str());
    if ((!json_written || !stats_error.empty()) && report.header.exit_status == kExitOk) return kExitRuntime;
    return report.header.exit_status;
}

}  // namespace

void add_run(CLI::App& app, Action& action) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* cmd = app.add_subcommand("run", "run an app and report its throughput");
    add_app_options(cmd, args->app);
    cmd->add_option("--json", args->json_out,
                    "also write the report as JSON to OUT ('-': standard output, the table then goes to stderr)")
        ->check(not_empty());
    cmd->add_flag("--quiet", args->quiet, "no progress line on stderr");
    cmd->add_option_function<std::string>("--latency", [args](const std::string& v) { args->app.overrides.latency = v; }, "latency measured at the sinks: off, all or \"sample N\" (default: the config's, else sample 64)")
        ->check(not_empty());
    cmd->add_option("--trace", args->trace,
                    "print the path of the first N packets through the graph: each stage and tile that handled "
                    "it, and the sink that took it or the reason it was dropped (also in --json)")
        ->check(CLI::Range(1u, 1u << 20));
    add_live_options(cmd, args->live);
    cmd->add_option("--eal", args->eal, "extra DPDK EAL arguments, passed through (e.g. \"--vdev net_null0\")")
        ->check(CLI::Validator(
            [](std::string& s) {
                try {
                    split_args(s);  // as EAL will be given them: a quote left open is a usage error
                } catch (const std::invalid_argument& e) {
                    return std::string(e.what());
                }
                return std::string();
            },
            "ARGS"));
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
                const AppPlan plan = plan_app(app);
                check_rank_layout(app, plan.graph, plan_ranks(app, plan.graph));  // whatever runs it
                check_strict_captures(app);
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
