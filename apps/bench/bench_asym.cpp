// bench asym: receive latency of an asymmetric channel against its sender count (the paper's
// Fig. 12). Sender 0 ping-pongs with the receiver while senders 1..N-1 stay idle, so every
// receive scans N-1 empty channels before it finds sender 0 (round-robin after the last
// served); the reply goes back on a one-to-one channel of the same transport. one-way =
// round trip / 2. Calls go through Channel<T>, as in the runtime. The `udn` and
// `udn_eventdev` rows use the messaging network's own many-to-one interface instead (every
// sender pushes into the receiver's one queue; bench_asym_noc.hpp), with K <= 128/(2N).
// `slope` is the least-squares slope of the latency against N: what an idle sender costs.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>
#include <vector>

#include "apps/bench/bench_asym_noc.hpp"
#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

const char* kHelp =
    "usage: tilepipe bench asym [options]\n"
    "Receive one-way latency of an asymmetric channel with one active sender and N-1 idle ones.\n"
    "  --iters N          round trips per measurement (default 100000)\n"
    "  --senders LIST     sender counts (default 1,2,4,8,16)\n"
    "  --capacity K       slots per channel (default 64; udn rows: at most 128/(2N) credits)\n";

struct Result {
    double one_way_ns = 0;
    uint64_t errors = 0;
};

Result measure(const Common& c, const std::string& transport, uint32_t senders, uint64_t iters, uint32_t capacity) {
    const ChannelSpec spec{transport, capacity, -1};
    AsymmetricReceiver<uint64_t> rx(spec, senders);
    auto reply = make_word_channel(spec);
    const uint64_t warmup = iters / 10 + 100;
    std::atomic<int> ready{0};
    auto start = [&] {
        ready.fetch_add(1);  // seq_cst: a start line, off the measured path
        while (ready.load() != 2) cpu_pause();
    };
    Result r;
    std::thread receiver([&] {
        pin(c.cpu_b);
        start();
        for (uint64_t i = 0; i < warmup + iters; ++i) {
            uint64_t v;
            while (!rx.try_recv(v)) cpu_pause();
            while (!reply->try_send(v)) cpu_pause();
        }
    });
    std::thread sender([&] {
        pin(c.cpu_a);
        start();
        Channel<uint64_t>& out = rx.sender(0);
        auto round_trip = [&](uint64_t i) {
            while (!out.try_send(i)) cpu_pause();
            uint64_t v;
            while (!reply->try_recv(v)) cpu_pause();
            r.errors += v != i;
        };
        for (uint64_t i = 0; i < warmup; ++i) round_trip(i);
        const auto t0 = std::chrono::steady_clock::now();
        for (uint64_t i = 0; i < iters; ++i) round_trip(warmup + i);
        const auto t1 = std::chrono::steady_clock::now();
        r.one_way_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iters) / 2;
    });
    sender.join();
    receiver.join();
    return r;
}

struct Case {
    std::string transport;
    uint32_t senders;
};

}  // namespace

int run_asym(int argc, char** argv) {
    const Args args(argc, argv, {"reps", "cpus", "transports", "json", "iters", "senders", "capacity"}, {"help"});
    if (args.has("help")) {
        std::printf("%s%s", kHelp, kCommonHelp);
        return 0;
    }
    Common c = parse_common(args, transport_names());
    const uint64_t iters = at_least(args, "iters", 100000, 1);
    const auto capacity = static_cast<uint32_t>(std::min<uint64_t>(at_least(args, "capacity", 64, 1), 1u << 20));
    std::vector<uint32_t> counts;
    for (const auto& s : args.list("senders", {"1", "2", "4", "8", "16"})) {
        const int v = std::stoi(s);
        if (v < 1 || v > static_cast<int>(AsymmetricReceiver<uint64_t>::kMaxSenders))
            throw std::invalid_argument("--senders: each count is 1..256, got " + s);
        counts.push_back(static_cast<uint32_t>(v));
    }
    start_eal_if_needed(c.transports);

    std::vector<Case> cases;
    for (const auto& t : c.transports)
        for (uint32_t n : counts) cases.push_back({t, n});
    std::vector<std::vector<double>> ns(cases.size());
    std::vector<uint32_t> credits(cases.size(), 0);  // K of the network's own interface (udn rows)
    uint64_t errors = 0;
    const unsigned reps = c.reps;
    c.reps = interleave(reps, cases.size(), [&](size_t k, unsigned) {
        Result r;
        if (is_noc_transport(cases[k].transport)) {
            const NocAsymResult m =
                measure_noc_asym(c.cpu_a, c.cpu_b, cases[k].transport, cases[k].senders, iters, capacity);
            r.one_way_ns = m.one_way_ns;
            r.errors = m.errors;
            credits[k] = m.credits;
        } else {
            r = measure(c, cases[k].transport, cases[k].senders, iters, capacity);
        }
        ns[k].push_back(r.one_way_ns);
        errors += r.errors;
    });
    if (c.reps == 0) return finish("asym", 0, reps);
    keep_reps(ns, c.reps);
    // Least-squares slope of the median latency against N, per transport: the cost of an idle sender.
    std::map<std::string, double> slope;
    for (const auto& t : c.transports) {
        double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (size_t k = 0; k < cases.size(); ++k)
            if (cases[k].transport == t) {
                const double x = cases[k].senders, y = summarize(ns[k]).median;
                n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
            }
        if (n >= 2 && n * sxx != sx * sx) slope[t] = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }

    std::vector<nlohmann::json> rows;
    for (size_t k = 0; k < cases.size(); ++k) {
        const Summary s = summarize(ns[k]);
        nlohmann::json row{{"transport", cases[k].transport},
                           {"senders", cases[k].senders},
                           {"one_way_ns", s.median},
                           {"one_way_ns_min", s.min},
                           {"one_way_ns_max", s.max},
                           {"reps", c.reps}};
        if (credits[k] != 0) row["credits"] = credits[k];
        if (slope.count(cases[k].transport) != 0) row["slope_ns_per_sender"] = slope[cases[k].transport];
        rows.push_back(row);
    }
    char title[160];
    std::snprintf(title, sizeof(title),
                  "asym: receive one-way latency, 1 active + N-1 idle senders, CPUs %d,%d, %llu round trips x %u "
                  "reps (median of reps)",
                  c.cpu_a, c.cpu_b, static_cast<unsigned long long>(iters), c.reps);
    print_table(title, rows,
                {{"transport", "/transport"},
                 {"senders", "/senders"},
                 {"one_way_ns", "/one_way_ns"},
                 {"min", "/one_way_ns_min"},
                 {"max", "/one_way_ns_max"},
                 {"K", "/credits"},
                 {"slope", "/slope_ns_per_sender", 2}});
    write_json(c.json, "asym", rows);
    if (errors != 0) {
        std::fprintf(stderr, "bench asym: %llu replies did not match their ping\n", static_cast<unsigned long long>(errors));
        return 1;
    }
    return finish("asym", c.reps, reps);
}

}  // namespace tp::bench
