// bench asym: receive latency of an asymmetric channel against its sender count (the paper's
// Fig. 12), and what the asymmetric interface costs over the symmetric one (its Table III).
// Sender 0 ping-pongs with the receiver while senders 1..N-1 stay idle, so every receive
// scans N-1 empty channels before it finds sender 0 (round-robin after the last served); the
// reply goes back on a one-to-one channel of the same transport. The `udn` and
// `udn_eventdev` rows use the messaging network's own many-to-one interface instead (every
// sender pushes into the receiver's one queue; bench_asym_noc.hpp), with K <= 128/(2N).
// In the same run, interleaved: `raw` (the bare ping-pong, the floor) and each transport's
// symmetric ping-pong (`sym`); delta = asym - sym of the same repetition. Timing is bench
// pingpong's harness (TSC per round trip, one-way = round trip / 2). Calls go through
// Channel<T> as in the runtime, or with --like-pingpong through the concrete types (bench
// pingpong's call path, its sym row being bench pingpong's row) with K = 1 unless given.
// `slope` is the least-squares slope of the latency against N: what an idle sender costs.
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "apps/bench/bench_asym_noc.hpp"
#include "apps/bench/bench_pingpong_measure.hpp"
#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

const char* kAsymHelp =
    "usage: tilepipe bench asym [options]\n"
    "Receive one-way latency of an asymmetric channel with one active sender and N-1 idle ones,\n"
    "with the bare ping-pong (raw) and each transport's symmetric ping-pong (sym) in the same run;\n"
    "delta = asym - sym.\n"
    "  --iters N          round trips per measurement (default 100000)\n"
    "  --senders LIST     sender counts (default 1,2,4,8,16)\n"
    "  --capacity K       slots per channel (default 64, 1 with --like-pingpong; udn rows: at\n"
    "                     most 128/(2N) credits)\n"
    "  --like-pingpong    bench pingpong's conditions: calls through the concrete queue types\n"
    "                     (not Channel<T>) and K = 1 unless --capacity is given\n";

// The receiver's scan over N queues, round-robin after the last served (AsymmetricReceiver's
// policy), inlined over the concrete type Q.
template <typename Q>
OneWay measure_scan(const Common& c, uint32_t senders, uint64_t iters, uint32_t capacity) {
    std::vector<std::unique_ptr<Q>> in;
    for (uint32_t i = 0; i < senders; ++i) in.push_back(std::make_unique<Q>(capacity));
    Q back(capacity);
    uint32_t next = 0;
    return measure(
        c, iters,
        [&](uint64_t i) {
            while (!in[0]->try_send(i)) cpu_pause();
            uint64_t v;
            while (!back.try_recv(v)) cpu_pause();
            return v == i;
        },
        [&](uint64_t) {
            uint64_t v = 0;
            for (;;) {
                uint32_t q = next;
                bool got = false;
                for (uint32_t j = 0; j < senders && !got; ++j) {
                    got = in[q]->try_recv(v);
                    q = q + 1 == senders ? 0 : q + 1;
                }
                if (got) {
                    next = q;
                    break;
                }
                cpu_pause();
            }
            while (!back.try_send(v)) cpu_pause();
        });
}

OneWay measure_asym_direct(const Common& c, const std::string& transport, uint32_t senders, uint64_t iters,
                           uint32_t capacity) {
    OneWay r;
    visit_queue<uint64_t>(transport, [&]<typename Q>(std::type_identity<Q>) {
        r = measure_scan<Q>(c, senders, iters, capacity);
    });
    return r;
}

// Through Channel<T>, as the runtime calls: AsymmetricReceiver over N channels.
OneWay measure_asym_channel(const Common& c, const std::string& transport, uint32_t senders, uint64_t iters,
                            uint32_t capacity) {
    const ChannelSpec spec{transport, capacity, -1};
    AsymmetricReceiver<uint64_t> rx(spec, senders);
    auto reply = make_word_channel(spec);
    Channel<uint64_t>& out = rx.sender(0);
    return measure(
        c, iters,
        [&](uint64_t i) {
            while (!out.try_send(i)) cpu_pause();
            uint64_t v;
            while (!reply->try_recv(v)) cpu_pause();
            return v == i;
        },
        [&](uint64_t) {
            uint64_t v;
            while (!rx.try_recv(v)) cpu_pause();
            while (!reply->try_send(v)) cpu_pause();
        });
}

// The symmetric ping-pong through Channel<T>.
OneWay measure_sym_channel(const Common& c, const std::string& transport, uint64_t iters, uint32_t capacity) {
    const ChannelSpec spec{transport, capacity, -1};
    auto there = make_word_channel(spec), back = make_word_channel(spec);
    return measure(
        c, iters,
        [&](uint64_t i) {
            while (!there->try_send(i)) cpu_pause();
            uint64_t v;
            while (!back->try_recv(v)) cpu_pause();
            return v == i;
        },
        [&](uint64_t) {
            uint64_t v;
            while (!there->try_recv(v)) cpu_pause();
            while (!back->try_send(v)) cpu_pause();
        });
}

struct AsymCase {
    std::string transport;  // "raw" for the floor
    std::string iface;      // raw, sym or asym
    uint32_t senders;
    size_t sym = 0;         // asym: the index of its transport's sym case
};

}  // namespace

int run_asym(int argc, char** argv) {
    const Args args(argc, argv, {"reps", "cpus", "transports", "json", "iters", "senders", "capacity"},
                    {"help", "like-pingpong"});
    if (args.has("help")) {
        std::printf("%s%s", kAsymHelp, kCommonHelp);
        return 0;
    }
    Common c = parse_common(args, transport_names());
    const bool direct = args.has("like-pingpong");
    const uint64_t iters = at_least(args, "iters", 100000, 1);
    const auto capacity =
        static_cast<uint32_t>(std::min<uint64_t>(at_least(args, "capacity", direct ? 1 : 64, 1), 1u << 20));
    std::vector<uint32_t> counts;
    for (const auto& s : args.list("senders", {"1", "2", "4", "8", "16"})) {
        const int v = std::stoi(s);
        if (v < 1 || v > static_cast<int>(AsymmetricReceiver<uint64_t>::kMaxSenders))
            throw std::invalid_argument("--senders: each count is 1..256, got " + s);
        counts.push_back(static_cast<uint32_t>(v));
    }
    start_eal_if_needed(c.transports);

    std::vector<AsymCase> cases{{"raw", "raw", 1}};
    for (const auto& t : c.transports) {
        const size_t sym = cases.size();
        cases.push_back({t, "sym", 1});
        for (uint32_t n : counts) cases.push_back({t, "asym", n, sym});
    }
    std::vector<std::vector<OneWay>> runs(cases.size());
    std::vector<uint32_t> credits(cases.size(), 0);  // K of the network's own interface (udn rows)
    const unsigned reps = c.reps;
    c.reps = interleave(reps, cases.size(), [&](size_t k, unsigned) {
        const AsymCase& cs = cases[k];
        OneWay w;
        if (cs.iface == "raw") {
            w = measure_raw(c, iters);
        } else if (cs.iface == "sym") {
            w = direct ? measure_transport(c, cs.transport, iters, capacity)
                       : measure_sym_channel(c, cs.transport, iters, capacity);
        } else if (is_noc_transport(cs.transport)) {
            const NocAsymResult m = measure_noc_asym(c, cs.transport, cs.senders, iters, capacity);
            w = m.one_way;
            credits[k] = m.credits;
        } else {
            w = direct ? measure_asym_direct(c, cs.transport, cs.senders, iters, capacity)
                       : measure_asym_channel(c, cs.transport, cs.senders, iters, capacity);
        }
        runs[k].push_back(w);
    });
    if (c.reps == 0) return finish("asym", 0, reps);
    keep_reps(runs, c.reps);

    const double tpn = ticks_per_ns();
    std::vector<Summary> ns(cases.size()), delta(cases.size());
    uint64_t errors = 0;
    for (size_t k = 0; k < cases.size(); ++k) {
        std::vector<double> v, d;
        for (unsigned r = 0; r < c.reps; ++r) {
            v.push_back(runs[k][r].avg / tpn);
            if (cases[k].iface == "asym") d.push_back((runs[k][r].avg - runs[cases[k].sym][r].avg) / tpn);
            errors += runs[k][r].errors;
        }
        ns[k] = summarize(v);
        if (!d.empty()) delta[k] = summarize(d);
    }
    // Least-squares slope of the median latency against N, per transport: the cost of an idle sender.
    std::map<std::string, double> slope;
    for (const auto& t : c.transports) {
        double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (size_t k = 0; k < cases.size(); ++k)
            if (cases[k].transport == t && cases[k].iface == "asym") {
                const double x = cases[k].senders, y = ns[k].median;
                n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
            }
        if (n >= 2 && n * sxx != sx * sx) slope[t] = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }

    std::vector<nlohmann::json> rows;
    for (size_t k = 0; k < cases.size(); ++k) {
        const AsymCase& cs = cases[k];
        nlohmann::json row{{"transport", cs.transport},
                           {"interface", cs.iface},
                           {"one_way_ns", ns[k].median},
                           {"one_way_ns_min", ns[k].min},
                           {"one_way_ns_max", ns[k].max},
                           {"capacity", capacity},
                           {"call_path", direct ? "direct" : "channel"},
                           {"reps", c.reps}};
        if (cs.iface == "asym") {
            row["senders"] = cs.senders;
            row["delta_ns"] = delta[k].median;
            if (slope.count(cs.transport) != 0) row["slope_ns_per_sender"] = slope[cs.transport];
        }
        if (credits[k] != 0) row["credits"] = credits[k];
        rows.push_back(row);
    }
    char title[200];
    std::snprintf(title, sizeof(title),
                  "asym: one-way latency, 1 active + N-1 idle senders, CPUs %d,%d, %llu round trips x %u reps, K=%u, "
                  "%s calls (median of reps; delta = asym - sym per rep)",
                  c.cpu_a, c.cpu_b, static_cast<unsigned long long>(iters), c.reps, capacity,
                  direct ? "direct" : "Channel<T>");
    print_table(title, rows,
                {{"transport", "/transport"},
                 {"iface", "/interface"},
                 {"senders", "/senders"},
                 {"one_way_ns", "/one_way_ns"},
                 {"min", "/one_way_ns_min"},
                 {"max", "/one_way_ns_max"},
                 {"K", "/credits"},
                 {"delta_ns", "/delta_ns", 1},
                 {"slope", "/slope_ns_per_sender", 2}});
    write_json(c.json, "asym", rows);
    if (errors != 0) {
        std::fprintf(stderr, "bench asym: %llu replies did not match their ping\n", static_cast<unsigned long long>(errors));
        return 1;
    }
    return finish("asym", c.reps, reps);
}

}  // namespace tp::bench
