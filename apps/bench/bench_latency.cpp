// bench latency: the latency curve of an app under load. The app runs once at top speed (its
// synth source unpaced, for --seconds) to find its own top rate, then once per point with the
// source paced (synth `pps`) at a share of that rate, or at the rates --pps gives, each point
// emitting rate x --seconds packets. Each row: the paced rate, the Mpps achieved, and the
// end-to-end latency percentiles the sinks recorded (latency: the app's rule, or --latency).
// Points run in order from the lowest rate, each with a fresh app (pools, tiles) in one EAL.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/runtime/stop_request.hpp"

namespace tp::bench {

namespace {

const char* kLatencyHelp =
    "usage: bench latency [options]\n"
    "The latency curve of an app: a run at top speed finds its top rate, then one run per point\n"
    "paces its synth source at a share of it; prints rate, Mpps achieved, p50, p99, p999 (us).\n"
    "  --app CONF         the app (default conf/default.yaml); its source must be synth\n"
    "  --percent LIST     points as percentages of the top rate (default 10,20,...,100)\n"
    "  --pps LIST         points as packets per second instead (no top-speed run)\n"
    "  --seconds S        length of each run in seconds (default 2)\n"
    "  --latency RULE     off, all or \"sample N\" (default: the app's, else sample 64)\n"
    "  --json OUT         also write {\"bench\": \"latency\", \"rows\": [...]} to OUT\n"
    "  --help             this text\n";

// The synth node the bench paces.
std::string synth_node(const AppConfig& app, const std::string& conf) {
    std::string found;
    for (const NodeConfig& n : app.pipeline)
        if (n.stage->name == "synth") {
            if (!found.empty()) throw std::invalid_argument(conf + ": more than one synth source; the bench paces one");
            found = n.name;
        }
    if (found.empty()) throw std::invalid_argument(conf + ": the bench paces a synth source and this app has none");
    return found;
}

double positive(const std::string& what, const std::string& text) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !(v > 0) || !std::isfinite(v))
        throw std::invalid_argument(what + " expects positive numbers, got '" + text + "'");
    return v;
}

struct Point {
    double pps = 0;  // 0: top speed
    double seconds = 0;
};

RunReport run_point(AppConfig app, const std::string& synth, const Point& p) {
    const auto set = [&](const std::string& param, const std::string& value) {
        apply_set(app, synth + "." + param + "=" + value);
    };
    set("mbps", "0");
    if (p.pps > 0) {
        set("pps", std::to_string(p.pps));
        set("duration", "0");
        set("count", std::to_string(std::max<uint64_t>(1000, static_cast<uint64_t>(p.pps * p.seconds))));
    } else {
        set("pps", "0");
        set("count", "0");
        set("duration", std::to_string(p.seconds));
    }
    AppRunner runner(app);
    return runner.run();
}

nlohmann::json row(double percent, double pps, const RunReport& r) {
    const LatencySummary& l = r.latency.end_to_end;
    return {{"percent", percent}, {"pps", pps},          {"mpps", r.mpps()},   {"p50_us", l.p50},
            {"p90_us", l.p90},    {"p99_us", l.p99},     {"p999_us", l.p999},  {"max_us", l.max},
            {"mean_us", l.mean},  {"samples", l.samples}, {"delivered", r.delivered}, {"drops", r.drops}};
}

}  // namespace

int run_latency(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::fputs(kLatencyHelp, stdout);
            return 0;
        }
    const Args args(argc, argv, {"app", "percent", "pps", "seconds", "latency", "json"}, {});
    const std::string conf = example_file(args.str("app", "conf/default.yaml"), "--app");
    AppConfig app;
    try {
        app = load_app_config(conf);
        if (args.has("latency")) set_latency(app, args.str("latency", ""));
    } catch (const LocatedError& e) {
        throw std::invalid_argument(e.what());
    }
    const double seconds = positive(args.label("seconds"), args.str("seconds", "2"));
    const std::string synth = synth_node(app, conf);
    std::vector<double> percents, rates;
    for (const auto& p : args.list("percent", {"10", "20", "30", "40", "50", "60", "70", "80", "90", "100"}))
        percents.push_back(positive(args.label("percent"), p));
    if (args.has("pps"))
        for (const auto& p : args.list("pps", {})) rates.push_back(positive(args.label("pps"), p));

    EalOptions eal = eal_options_for(app, plan_app(app));
    eal_start(eal);

    // Ctrl-C ends the run in progress early (its sources stop, what is in flight drains); that
    // point is not reported, the ones before it are.
    install_stop_signal_handlers();
    const size_t runs = (rates.empty() ? 1 + percents.size() : rates.size());
    if (double(runs) * seconds > 3.0)
        std::fprintf(stderr, "bench latency: %zu runs of %g s: about %.0f s (Ctrl-C stops early and reports what was measured)\n",
                     runs, seconds, double(runs) * seconds);
    std::vector<nlohmann::json> rows;
    double top_pps = 0;
    bool interrupted = false;
    if (rates.empty()) {
        const RunReport top = run_point(app, synth, Point{0, seconds});
        if (stop_requested()) {
            std::fprintf(stderr, "bench latency: interrupted during the top-speed run: nothing to report\n");
            return kExitInterrupted;
        }
        top_pps = top.mpps() * 1e6;
        rows.push_back(row(100, 0, top));
        std::fprintf(stderr, "top speed: %.3f Mpps\n", top.mpps());
        std::sort(percents.begin(), percents.end());
        for (double pct : percents) rates.push_back(top_pps * pct / 100);
    } else {
        std::sort(rates.begin(), rates.end());
    }
    for (double pps : rates) {
        const RunReport r = run_point(app, synth, Point{pps, seconds});
        if (stop_requested()) {
            interrupted = true;
            break;
        }
        rows.push_back(row(top_pps > 0 ? 100 * pps / top_pps : 0, pps, r));
        std::fprintf(stderr, ".");
    }
    std::fprintf(stderr, "\n");
    print_table("latency of " + app.name + " (" + app.latency.str() + "; pps 0 = top speed)", rows,
                {{"% top", "/percent", 0}, {"pps", "/pps", 0}, {"Mpps", "/mpps", 3}, {"p50 us", "/p50_us", 2},
                 {"p99 us", "/p99_us", 2}, {"p999 us", "/p999_us", 2}, {"max us", "/max_us", 1},
                 {"samples", "/samples", 0}});
    write_json(args.str("json", ""), "latency", rows);
    if (interrupted) {
        std::fprintf(stderr, "bench latency: interrupted: %zu of %zu runs reported\n", rows.size(), runs);
        return kExitInterrupted;
    }
    return 0;
}

}  // namespace tp::bench
