// Command-line options every app-taking subcommand shares (run, validate, topo), and how they
// turn into a validated AppConfig.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"

namespace tp::cli {

struct AppArgs {
    std::string conf;
    std::string pcap;
    uint64_t loop = 0;
    bool loop_given = false;
    std::string topology;
    std::vector<std::string> sets;
};

void add_app_options(CLI::App* cmd, AppArgs& a);

// Loads CONF and applies --pcap, --loop, --topology and --set, in that order; LocatedError on
// any problem (before anything starts).
AppConfig load_app(const AppArgs& a);

// "src -> parse -> drop"
std::string describe(const AppConfig& app);

}  // namespace tp::cli
