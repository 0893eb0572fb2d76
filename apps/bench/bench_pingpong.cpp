// bench pingpong: one-way latency of a one-word ping-pong between two pinned threads, per
// transport, plus `raw`: a bare ping-pong of one atomic per direction, each on its own cache
// line, the physical floor on this host (the analog of the paper's Table II).
//
// The ping thread times every round trip with the TSC; one-way = round trip / 2; the
// statistics stay in registers so that the bench itself adds no memory traffic. Both sides
// poll with a CPU pause between attempts, in every row alike.
//
// K defaults to 1: a ping-pong never has more than one message in flight, so K = 1 measures
// the mechanism itself. With a larger K every slot-based transport walks over K lines per
// direction instead of reusing one, which costs by itself on this host (a line last touched
// K messages ago is no longer where the hardware expects it); the `raw_k` row, shown when
// K > 1, is the bare ping-pong over K rotating lines: the floor for those rows.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "apps/bench/bench_pingpong_measure.hpp"
#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "apps/bench/hop_pair.hpp"
#include "apps/bench/queues.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

const char* kPingpongHelp =
    "usage: tilepipe bench pingpong [options]\n"
    "One-way latency of a one-word ping-pong between two pinned threads, per transport, with a\n"
    "`raw` row (one atomic per direction, each on its own cache line). With `udn` comes\n"
    "`udn_logical`: the same over 8 logical channels sharing one queue each way.\n"
    "  --iters N          round trips per measurement (default 200000)\n"
    "  --capacity K       slots per channel (default 1); K > 1 adds a `raw_k` row: the bare\n"
    "                     ping-pong over K rotating lines per direction\n"
    "  --hops H           pin the two threads to the CPUs of two tiles H hops apart on the\n"
    "                     topology (instead of --cpus); says so when this host cannot tell\n"
    "  --topology NAME    for --hops: host (default), tilepro64, epiphany16, epiphany64\n";

// The bare ping-pong over K lines per direction, used round-robin like a K-slot channel.
OneWay measure_raw_k(const Common& c, uint64_t iters, uint32_t k) {
    struct alignas(64) Line {
        std::atomic<uint64_t> v{~0ull};
    };
    std::vector<Line> there(k), back(k);
    const bool pow2 = (k & (k - 1)) == 0;
    auto at = [=](uint64_t i) { return pow2 ? i & (k - 1) : i % k; };
    return measure(
        c, iters,
        [&](uint64_t i) {
            there[at(i)].v.store(i, std::memory_order_release);  // as raw: the word is the message
            while (back[at(i)].v.load(std::memory_order_acquire) != i) cpu_pause();
            return true;
        },
        [&](uint64_t i) {
            while (there[at(i)].v.load(std::memory_order_acquire) != i) cpu_pause();
            back[at(i)].v.store(i, std::memory_order_release);
        });
}

}  // namespace

int run_pingpong(int argc, char** argv) {
    const Args args(argc, argv, {"reps", "cpus", "transports", "json", "iters", "capacity", "hops", "topology"},
                    {"help"});
    if (args.has("help")) {
        std::printf("%s%s", kPingpongHelp, kCommonHelp);
        return 0;
    }
    Common c = parse_common(args, transport_names());
    std::string placement;
    if (args.has("hops")) {
        const HopPair hp = pick_hop_pair(Topology::preset(args.str("topology", "host")),
                                         static_cast<int>(args.num("hops", 1)), allowed_cpus());
        // No figures that would mean nothing: a user's error (exit 2) saying why.
        if (!hp.ok) throw std::invalid_argument("--hops " + args.str("hops", "") + ": " + hp.note);
        std::printf("pingpong --hops: %s\n", hp.note.c_str());
        c.cpu_a = hp.cpu_a;
        c.cpu_b = hp.cpu_b;
        placement = hp.note;
    }
    const uint64_t iters = at_least(args, "iters", 200000, 1);
    const auto capacity = static_cast<uint32_t>(std::min<uint64_t>(at_least(args, "capacity", 1, 1), 1u << 20));
    start_eal_if_needed(c.transports);

    std::vector<std::string> cases{"raw"};
    if (capacity > 1) cases.push_back("raw_k");
    cases.insert(cases.end(), c.transports.begin(), c.transports.end());
    if (std::find(cases.begin(), cases.end(), "udn") != cases.end()) cases.push_back("udn_logical");
    std::vector<std::vector<OneWay>> runs(cases.size());
    const unsigned reps = c.reps;
    c.reps = interleave(reps, cases.size(), [&](size_t k, unsigned) {
        if (cases[k] == "raw") runs[k].push_back(measure_raw(c, iters));
        else if (cases[k] == "raw_k") runs[k].push_back(measure_raw_k(c, iters, capacity));
        else runs[k].push_back(measure_transport(c, cases[k], iters, capacity));
    });
    if (c.reps == 0) return finish("pingpong", 0, reps);
    keep_reps(runs, c.reps);

    const double tpn = ticks_per_ns();
    std::vector<nlohmann::json> rows;
    uint64_t errors = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
        std::vector<double> avg, sd, mx, ratio;
        for (unsigned r = 0; r < c.reps; ++r) {
            const OneWay& w = runs[k][r];
            avg.push_back(w.avg / tpn);
            sd.push_back(w.std / tpn);
            mx.push_back(w.max / tpn);
            ratio.push_back(w.avg / runs[0][r].avg);  // against raw of the same repetition
            errors += w.errors;
        }
        const Summary a = summarize(avg);
        rows.push_back({{"transport", cases[k]},
                        {"one_way_ns",
                         {{"avg", a.median},
                          {"avg_min", a.min},
                          {"avg_max", a.max},
                          {"std", summarize(sd).median},
                          {"max", summarize(mx).median}}},
                        {"one_way_cycles", a.median * tpn},
                        {"vs_raw", summarize(ratio).median},
                        {"reps", c.reps}});
    }
    char title[160];
    std::snprintf(title, sizeof(title),
                  "pingpong: one-way latency, CPUs %d,%d, %llu round trips x %u reps, K=%u (median of reps; "
                  "vs_raw = median of per-rep ratios)",
                  c.cpu_a, c.cpu_b, static_cast<unsigned long long>(iters), c.reps, capacity);
    print_table(title, rows,
                {{"transport", "/transport"},
                 {"avg_ns", "/one_way_ns/avg"},
                 {"min", "/one_way_ns/avg_min"},
                 {"max", "/one_way_ns/avg_max"},
                 {"std_ns", "/one_way_ns/std"},
                 {"max_ns", "/one_way_ns/max"},
                 {"cycles", "/one_way_cycles", 0},
                 {"vs_raw", "/vs_raw", 2}});
    if (!placement.empty())
        for (auto& row : rows) row["placement"] = placement;
    write_json(c.json, "pingpong", rows);
    if (errors != 0) {
        std::fprintf(stderr, "bench pingpong: %llu replies did not match their ping\n",
                     static_cast<unsigned long long>(errors));
        return 1;
    }
    return finish("pingpong", c.reps, reps);
}

}  // namespace tp::bench
