// The `tilepipe` subcommands, each registered on the CLI11 app by its own file.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "framework/graph/run_outcome.hpp"  // the exit codes (kExitOk, ...)

namespace tp::cli {

// Exit codes shared by every subcommand (run_outcome.hpp).
using tp::kExitOk;
using tp::kExitRuntime;
using tp::kExitUsage;
using tp::kExitAccounting;
using tp::kExitSignalBase;

// For an option whose value names something (a file, an address, a count): an empty value is a
// mistake (a shell variable that was not set), refused rather than read as "not given".
inline CLI::Validator not_empty() {
    return CLI::Validator([](std::string& s) { return s.empty() ? std::string("needs a value, got ''") : std::string(); }, "",
                          "NOT_EMPTY");
}

// A subcommand adds itself to `app` and sets `action` to the function run when it is chosen.
using Action = std::function<int()>;
void add_run(CLI::App& app, Action& action);
void add_validate(CLI::App& app, Action& action);
void add_stages(CLI::App& app, Action& action);
void add_topo(CLI::App& app, Action& action);
void add_plot(CLI::App& app, Action& action);
void add_watch(CLI::App& app, Action& action);

}  // namespace tp::cli
