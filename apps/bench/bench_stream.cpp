// bench stream: messages per second streaming sequence-numbered items from one pinned thread
// to another, single and in bursts of 8 and 32, for every transport and, in the same run, for
// boost::lockfree::spsc_queue and moodycamel::ReaderWriterQueue.
//
// Both sides poll with a CPU pause after a failed attempt; the receiver checks every item's
// number, so nothing is optimised away and a broken queue fails the bench.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "apps/bench/queues.hpp"
#include "descriptors/packet_desc.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

const char* kStreamHelp =
    "usage: tilepipe bench stream [options]\n"
    "Messages per second streaming items between two pinned threads, single and in bursts, per\n"
    "transport and for boost::lockfree::spsc_queue and moodycamel::ReaderWriterQueue. With `udn`\n"
    "comes `udn_logical`: item i on logical channel i mod 8, all 8 sharing one queue each way.\n"
    "  --items N          items per measurement (default 50000000)\n"
    "  --bursts LIST      burst sizes, each 1..32 (default 1,8,32)\n"
    "  --capacity K       slots per queue (default 1024)\n"
    "  --elem word|desc   a 64-bit word or a 16-byte PacketDesc (default word)\n"
    "  --peers LIST       peers to measure (default boost_spsc,moodycamel; 'none' for none)\n";

template <typename T>
T make(uint64_t v) {
    if constexpr (std::is_same_v<T, PacketDesc>) {
        PacketDesc d{};
        d.mbuf = reinterpret_cast<rte_mbuf*>(static_cast<uintptr_t>(v));
        d.flow_hash = static_cast<uint32_t>(v);
        return d;
    } else {
        return v;
    }
}
template <typename T>
uint64_t number(const T& v) {
    if constexpr (std::is_same_v<T, PacketDesc>) return reinterpret_cast<uintptr_t>(v.mbuf);
    else return v;
}

struct Result {
    double mmsgs = 0;
    uint64_t errors = 0;
};

template <typename T, typename Q>
Result measure(const Common& c, uint64_t items, uint32_t burst, uint32_t capacity) {
    Q q(capacity);
    std::atomic<int> ready{0};
    auto start = [&] {
        ready.fetch_add(1);  // seq_cst: a start line, off the measured path
        while (ready.load() != 2) cpu_pause();
    };
    std::chrono::steady_clock::time_point t0, t1;
    Result r;
    std::thread producer([&] {
        pin(c.cpu_a);
        start();
        t0 = std::chrono::steady_clock::now();
        T buf[32];
        for (uint64_t seq = 0; seq < items;) {
            if (burst == 1) {
                const T v = make<T>(seq);
                while (!q.try_send(v)) cpu_pause();
                ++seq;
                continue;
            }
            const auto want = static_cast<uint32_t>(std::min<uint64_t>(burst, items - seq));
            for (uint32_t k = 0; k < want; ++k) buf[k] = make<T>(seq + k);
            for (uint32_t sent = 0; sent < want;) {
                const uint32_t m = q.try_send_burst(buf + sent, want - sent);
                if (m == 0) cpu_pause();
                sent += m;
            }
            seq += want;
        }
    });
    std::thread consumer([&] {
        pin(c.cpu_b);
        start();
        T buf[32];
        uint64_t expected = 0, errors = 0;
        while (expected < items) {
            const uint32_t n = burst == 1 ? (q.try_recv(buf[0]) ? 1u : 0u) : q.try_recv_burst(buf, burst);
            if (n == 0) {
                cpu_pause();
                continue;
            }
            for (uint32_t k = 0; k < n; ++k) errors += number(buf[k]) != expected++;
        }
        t1 = std::chrono::steady_clock::now();
        r.errors = errors;
    });
    producer.join();
    consumer.join();
    r.mmsgs = static_cast<double>(items) / std::chrono::duration<double, std::micro>(t1 - t0).count();
    return r;
}

struct StreamCase {
    std::string queue;
    uint32_t burst;
};

}  // namespace

int run_stream(int argc, char** argv) {
    const Args args(argc, argv,
                    {"reps", "cpus", "transports", "json", "items", "bursts", "capacity", "elem", "peers"}, {"help"});
    if (args.has("help")) {
        std::printf("%s%s", kStreamHelp, kCommonHelp);
        return 0;
    }
    Common c = parse_common(args, transport_names());
    const uint64_t items = at_least(args, "items", 50000000, 1);
    const auto capacity = static_cast<uint32_t>(std::min<uint64_t>(at_least(args, "capacity", 1024, 1), 1u << 20));
    const std::string elem = args.str("elem", "word");
    if (elem != "word" && elem != "desc") throw std::invalid_argument("--elem is word or desc, got '" + elem + "'");
    std::vector<uint32_t> bursts;
    for (const auto& b : args.list("bursts", {"1", "8", "32"})) {
        int v = 0;
        try {
            v = std::stoi(b);
        } catch (const std::exception&) {
            v = 0;
        }
        if (v < 1 || v > 32 || std::to_string(v) != b) throw std::invalid_argument("--bursts: each burst is 1..32, got " + b);
        bursts.push_back(static_cast<uint32_t>(v));
    }
    std::vector<std::string> queues = c.transports;
    if (std::find(queues.begin(), queues.end(), "udn") != queues.end()) queues.push_back("udn_logical");
    for (const auto& p : args.list("peers", peer_names())) {
        if (p == "none") continue;
        if (std::find(peer_names().begin(), peer_names().end(), p) == peer_names().end())
            throw std::invalid_argument("unknown peer '" + p + "' (known: boost_spsc, moodycamel)");
        queues.push_back(p);
    }
    start_eal_if_needed(c.transports);

    std::vector<StreamCase> cases;
    for (uint32_t b : bursts)
        for (const auto& q : queues) cases.push_back({q, b});
    std::vector<std::vector<double>> mmsgs(cases.size());
    uint64_t errors = 0;
    const unsigned reps = c.reps;
    c.reps = interleave(reps, cases.size(), [&](size_t k, unsigned) {
        auto run = [&]<typename T>() {
            visit_queue<T>(cases[k].queue, [&]<typename Q>(std::type_identity<Q>) {
                const Result r = measure<T, Q>(c, items, cases[k].burst, capacity);
                mmsgs[k].push_back(r.mmsgs);
                errors += r.errors;
            });
        };
        if (elem == "word") run.template operator()<uint64_t>();
        else run.template operator()<PacketDesc>();
    });
    if (c.reps == 0) return finish("stream", 0, reps);
    keep_reps(mmsgs, c.reps);

    std::vector<nlohmann::json> rows;
    for (size_t k = 0; k < cases.size(); ++k) {
        const Summary s = summarize(mmsgs[k]);
        // Against `ring` with the same burst, per repetition (drift hits both alike).
        std::vector<double> ratio;
        for (size_t j = 0; j < cases.size(); ++j)
            if (cases[j].queue == "ring" && cases[j].burst == cases[k].burst)
                for (unsigned r = 0; r < c.reps; ++r) ratio.push_back(mmsgs[k][r] / mmsgs[j][r]);
        nlohmann::json row{{"transport", cases[k].queue},
                           {"burst", cases[k].burst},
                           {"mmsgs_per_s", s.median},
                           {"mmsgs_min", s.min},
                           {"mmsgs_max", s.max},
                           {"elem", elem},
                           {"reps", c.reps}};
        if (!ratio.empty()) row["vs_ring"] = summarize(ratio).median;
        rows.push_back(row);
    }
    char title[160];
    std::snprintf(title, sizeof(title),
                  "stream: Mmsgs/s, CPUs %d,%d, %llu %s items x %u reps, capacity %u (median of reps; "
                  "vs_ring = median of per-rep ratios)",
                  c.cpu_a, c.cpu_b, static_cast<unsigned long long>(items), elem.c_str(), c.reps, capacity);
    print_table(title, rows,
                {{"transport", "/transport"},
                 {"burst", "/burst"},
                 {"mmsgs_per_s", "/mmsgs_per_s", 2},
                 {"min", "/mmsgs_min", 2},
                 {"max", "/mmsgs_max", 2},
                 {"vs_ring", "/vs_ring", 2}});
    write_json(c.json, "stream", rows);
    if (errors != 0) {
        std::fprintf(stderr, "bench stream: %llu items arrived out of order\n", static_cast<unsigned long long>(errors));
        return 1;
    }
    return finish("stream", c.reps, reps);
}

}  // namespace tp::bench
