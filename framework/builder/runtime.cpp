// tp::Runtime (include/tilepipe/app.hpp): EAL started once for the process, as `tilepipe run`
// starts it, and an app run to its end with the report the CLI prints.
#include <atomic>
#include <optional>

#include <nlohmann/json.hpp>

#include "framework/builder/app_state.hpp"
#include "framework/builder/run_steps.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/graph/rank_plan.hpp"
#include "framework/graph/run_outcome.hpp"
#include "framework/runtime/stop_request.hpp"

namespace tp {

namespace {

// Claimed by the Runtime alive, so two cannot each believe they chose EAL's options.
std::atomic<bool> g_runtime_alive{false};

Report public_report(const RunReport& r) {
    Report p;
    p.app = r.app;
    p.text = format_table(r);
    p.json = to_json(r).dump(2) + "\n";
    p.exit_status = r.header.exit_status;
    p.packets = r.packets;
    p.delivered = r.delivered;
    p.drops = r.drops;
    p.unaccounted = r.unaccounted;
    p.pools_full = r.pools_full();
    p.seconds = r.seconds;
    p.mpps = r.mpps();
    for (const StageReport& s : r.stages)
        p.nodes.push_back(NodeCounts{s.name, s.stage, s.kind, s.in, s.out, s.drops, s.kind == "sink" ? s.out : 0, s.bytes});
    return p;
}

// The exception in flight, as the AppError a program gets; a stop asked of the failed run is
// forgotten with it.
[[noreturn]] void rethrow_as_app_error(const AppConfig& app) {
    clear_stop_request();
    try {
        throw;
    } catch (const LocatedError& e) {
        throw to_app_error(e);
    } catch (const std::exception& e) {
        throw AppError("app '" + app.name + "'", e.what());
    }
}

}  // namespace

Runtime::Runtime(RuntimeOptions options) : options_(std::move(options)) {
    if (g_runtime_alive.exchange(true))
        throw AppError("Runtime", "a process has one Runtime (DPDK's EAL starts once per process): run every app through it");
}

Runtime::~Runtime() { g_runtime_alive.store(false); }

void Runtime::stop() noexcept { request_stop(); }

PreparedRun prepare_run(const AppBuilderState& state, const RuntimeOptions& options, const RunSettings& settings) {
    PreparedRun run;
    std::optional<AppPlan> plan;
    try {
        run.app = state.assemble();
        plan = plan_app(run.app);  // placement errors are the app's: before EAL
        // A program runs the app as one process: a rank above 0 needs `mpirun ... tilepipe run`.
        const RankLayout ranks = plan_ranks(run.app, plan->graph);
        check_world(run.app, ranks, 1, false);
    } catch (const LocatedError& e) {
        throw to_app_error(e);
    }
    try {
        if (!eal_started()) {
            EalOptions eal = eal_options_for(run.app, *plan);
            eal.user_args = options.eal_args;
            if (options.memory_mb != 0) eal.memory_bytes = options.memory_mb << 20;
            check_pool_memory(run.app, *plan, eal, eal_memory_available(eal));
            eal_start(eal);
        }
        if (settings.handle_signals) install_stop_signal_handlers(SecondSignal::CutShort);
        run.runner = std::make_unique<AppRunner>(run.app, std::move(*plan));
    } catch (const std::exception&) {
        rethrow_as_app_error(run.app);
    }
    return run;
}

RunReport run_prepared(PreparedRun& run, const RunSettings& settings) {
    RunReport report;
    try {
        RunOptions opts;
        opts.progress = settings.progress;
        report = run.runner->run(opts);
    } catch (const std::exception&) {
        rethrow_as_app_error(run.app);
    }
    clear_stop_request();  // a stop asked of this run ends only this run
    return report;
}

Report finish_run(RunReport report, const AppConfig& app, const RunSettings& settings) {
    finish_report(report, app, settings.config, {});
    return public_report(report);
}

Report Runtime::run(const AppBuilder& builder, const RunSettings& settings) {
    PreparedRun run = prepare_run(*builder.state_, options_, settings);
    return finish_run(run_prepared(run, settings), run.app, settings);
}

}  // namespace tp
