// What a finished run tells its caller, the same for `tilepipe run` and a C++ program that runs
// an app (include/tilepipe/app.hpp): the exit status and the report's header.
#pragma once

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/metrics/run_report.hpp"

namespace tp {

// Exit codes, shared by every `tilepipe` subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;     // the run failed (unreadable capture, EAL, ...)
inline constexpr int kExitUsage = 2;       // bad command line or config
inline constexpr int kExitAccounting = 3;  // packets unaccounted for or mbufs leaked
inline constexpr int kExitSignalBase = 128;  // + the signal that ended a run early (130: Ctrl-C)

// Worst first: lost packets or mbufs, then a failed node, then a signal that cut the run short.
int exit_status_of(const RunReport& r);

// The files the app's sources replay (a capture, a file a port device reads), once each.
std::vector<std::string> captures_of(const AppConfig& app);

// Fills the header a run's report prints (version, config, captures, overrides, exit status).
void finish_report(RunReport& r, const AppConfig& app, const std::string& config,
                   std::vector<std::string> overrides);

}  // namespace tp
