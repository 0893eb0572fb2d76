// Command-line options every app-taking subcommand shares (run, validate, topo), and how they
// turn into a validated AppConfig.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"

namespace tp::cli {

struct AppArgs {
    std::string conf;
    AppOverrides overrides;
    std::vector<std::string> plugins;  // --plugin FILE, loaded before CONF is read
};

void add_app_options(CLI::App* cmd, AppArgs& a);

// --plugin FILE (repeatable): a shared library of stages to load (framework/plugin/).
void add_plugin_option(CLI::App* cmd, std::vector<std::string>& plugins);

// Loads the default plugin folders' and --plugin's plugins, then CONF, and applies --pcap, --loop, --topology and --set (overrides.hpp); LocatedError on
// any problem (before anything starts).
AppConfig load_app(const AppArgs& a);

// "src -> parse -> drop"
std::string describe(const AppConfig& app);

}  // namespace tp::cli
