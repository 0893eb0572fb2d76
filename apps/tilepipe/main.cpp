// tilepipe: compose packet apps from YAML stage configs, run them on tiles, report throughput.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>

#include "apps/tilepipe/commands.hpp"

#ifdef TILEPIPE_HAVE_BENCH
#include "apps/bench/bench.hpp"
#endif

int main(int argc, char** argv) {
#ifdef TILEPIPE_HAVE_BENCH
    // Benchmarks parse their own flags (`tilepipe bench NAME --help`).
    if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) return tp::bench::main(argc - 1, argv + 1);
#endif
    CLI::App app{"tilepipe: packet apps composed from YAML stage configs, run on tiles mapped onto CPUs"};
    app.require_subcommand(1);
    app.footer(
        "Subcommands: run, validate, stages, topo, plot"
#ifdef TILEPIPE_HAVE_BENCH
        ", bench (tilepipe bench --help)"
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
    tp::cli::add_plot(app, action);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "tilepipe: %s\nRun 'tilepipe --help' (or 'tilepipe SUBCOMMAND --help') for usage.\n",
                     e.what());
        return tp::cli::kExitUsage;
    }

    auto logger = spdlog::stderr_color_mt("tilepipe");
    logger->set_pattern("tilepipe: %^%l%$: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(log_level));
    return action ? action() : tp::cli::kExitUsage;
}
