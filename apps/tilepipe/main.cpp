// tilepipe: compose packet apps from YAML stage configs, run them on tiles, report throughput.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "apps/tilepipe/commands.hpp"

#ifdef TILEPIPE_HAVE_BENCH
#include "apps/bench/bench.hpp"
#endif

namespace {
constexpr const char* kCommands = "run, validate, topo, stages, plot, watch"
#ifdef TILEPIPE_HAVE_BENCH
                                  ", bench"
#endif
    ;

// The first word that is not an option (or the value of --log-level): the command.
int command_index(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--log-level") == 0) ++i;
        else if (argv[i][0] != '-') return i;
    }
    return 0;
}

bool is_command(const std::string& word) {
    const std::string list = kCommands;
    for (size_t from = 0; from <= list.size();) {
        const size_t end = std::min(list.find(", ", from), list.size());
        if (list.compare(from, end - from, word) == 0 && end - from == word.size()) return true;
        from = end + 2;
    }
    return false;
}

// `--set filter.expr=tcp port 80` unquoted: the shell split the value, and the words after the
// first are left over. Says how to quote it; empty when no --set value was split.
std::string split_set_hint(int argc, char** argv, const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return {};
    for (int i = 1; i + 2 < argc; ++i) {
        if (std::strcmp(argv[i], "--set") != 0 || std::strchr(argv[i + 1], '=') == nullptr || argv[i + 2][0] == '-' ||
            std::strstr(e.what(), argv[i + 2]) == nullptr)
            continue;
        std::string value = argv[i + 1];
        for (int j = i + 2; j < argc && argv[j][0] != '-'; ++j) value += std::string(" ") + argv[j];
        return "A --set value with spaces is one argument: quote it, --set '" + value + "'\n";
    }
    return {};
}
}  // namespace

int main(int argc, char** argv) {
    const int cmd = command_index(argc, argv);
#ifdef TILEPIPE_HAVE_BENCH
    // Benchmarks parse their own flags (`tilepipe bench NAME --help`); a --log-level before
    // `bench` still applies.
    if (cmd > 0 && std::strcmp(argv[cmd], "bench") == 0) {
        for (int i = 1; i + 1 < cmd; ++i)
            if (std::strcmp(argv[i], "--log-level") == 0) {
                const std::string level = argv[i + 1];
                if (spdlog::level::from_str(level) == spdlog::level::off && level != "off") {
                    std::fprintf(stderr, "tilepipe: --log-level: '%s' is not one of trace, debug, info, warn, error, off\n",
                                 level.c_str());
                    return tp::cli::kExitUsage;
                }
                spdlog::set_level(spdlog::level::from_str(level));
            }
        return tp::bench::main(argc - cmd, argv + cmd);
    }
#endif
    if (cmd > 0 && !is_command(argv[cmd])) {
        std::fprintf(stderr, "tilepipe: unknown command '%s' (commands: %s; tilepipe --help for usage)\n", argv[cmd],
                     kCommands);
        return tp::cli::kExitUsage;
    }
    CLI::App app{"tilepipe: packet apps composed from YAML stage configs, run on tiles mapped onto CPUs"};
    app.require_subcommand(1);
    // Options of the whole command (--log-level) may also follow the subcommand and its CONF.
    app.fallthrough();
    app.footer(std::string("Commands: ") + kCommands +
#ifdef TILEPIPE_HAVE_BENCH
               " (tilepipe bench --help lists the benches)"
#endif
               ".\nExample: tilepipe run conf/default.yaml --json r.json");
    std::string log_level = "info";
    app.add_option("--log-level", log_level, "log level: trace, debug, info, warn, error, off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
        ->capture_default_str();
    app.set_version_flag("--version", "tilepipe 0.1.0");

    tp::cli::Action action;
    tp::cli::add_run(app, action);
    tp::cli::add_validate(app, action);
    tp::cli::add_stages(app, action);
    tp::cli::add_topo(app, action);
#ifdef TILEPIPE_HAVE_BENCH
    // Listed in --help only: main() hands `bench` to the benches before parsing.
    app.add_subcommand("bench", "channel, network and map benchmarks (tilepipe bench --help)");
#endif
    tp::cli::add_plot(app, action);
    tp::cli::add_watch(app, action);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        if (cmd == 0 && !app.got_subcommand("run")) {  // no command at all
            std::fprintf(stderr, "tilepipe: a command is required (commands: %s)\nRun 'tilepipe --help' for usage.\n",
                         kCommands);
            return tp::cli::kExitUsage;
        }
        std::fprintf(stderr, "tilepipe: %s\n%sRun 'tilepipe --help' (or 'tilepipe SUBCOMMAND --help') for usage.\n",
                     e.what(), split_set_hint(argc, argv, e).c_str());
        return tp::cli::kExitUsage;
    }

    auto logger = spdlog::stderr_color_mt("tilepipe");
    logger->set_pattern("tilepipe: %^%l%$: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(log_level));
    return action ? action() : tp::cli::kExitUsage;
}
