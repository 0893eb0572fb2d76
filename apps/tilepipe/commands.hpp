// The `tilepipe` subcommands, each registered on the CLI11 app by its own file.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tp::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;     // the run failed (unreadable capture, EAL, ...)
inline constexpr int kExitUsage = 2;       // bad command line or config
inline constexpr int kExitAccounting = 3;  // packets unaccounted for or mbufs leaked
inline constexpr int kExitSignalBase = 128;  // + the signal that ended a run early (130: Ctrl-C)

// A subcommand adds itself to `app` and sets `action` to the function run when it is chosen.
using Action = std::function<int()>;
void add_run(CLI::App& app, Action& action);
void add_validate(CLI::App& app, Action& action);
void add_stages(CLI::App& app, Action& action);
void add_topo(CLI::App& app, Action& action);
void add_plot(CLI::App& app, Action& action);

}  // namespace tp::cli
