// Runtime::run's steps (framework/builder/runtime.cpp), shared with tp::PacketAccelerator,
// which runs its app on a thread of its own: the same checks, EAL start, runner and report.
#pragma once

#include <memory>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"
#include "tilepipe/app.hpp"

namespace tp {

struct AppBuilderState;

struct PreparedRun {
    AppConfig app;
    std::unique_ptr<AppRunner> runner;  // stages built and opened, threads not started
};

// Assembles and plans the app, starts EAL when it is not up, builds the runner. Throws AppError.
PreparedRun prepare_run(const AppBuilderState& state, const RuntimeOptions& options, const RunSettings& settings);
// Runs it to the end. Throws AppError when the run cannot start.
RunReport run_prepared(PreparedRun& run, const RunSettings& settings);
// The report Runtime::run returns.
Report finish_run(RunReport report, const AppConfig& app, const RunSettings& settings);

}  // namespace tp
