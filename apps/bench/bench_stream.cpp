// bench stream: messages per second streaming sequence-numbered items from one pinned thread
// to another, single and in bursts of 8 and 32, for every transport and, in the same run, for
// boost::lockfree::spsc_queue, moodycamel::ReaderWriterQueue and (tilepipe-bench beside FastFlow)
// FastFlow's SWSR buffer. The loop is stream_measure.hpp's.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "apps/bench/queues.hpp"
#include "apps/bench/stream_measure.hpp"
#include "descriptors/packet_desc.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

const char* kStreamHelp =
    "usage: tilepipe bench stream [options]\n"
    "Messages per second streaming items between two pinned threads, single and in bursts, per\n"
    "transport and for boost::lockfree::spsc_queue, moodycamel::ReaderWriterQueue and, in\n"
    "tilepipe-bench built beside FastFlow's headers, FastFlow's SWSR buffer (words only). With\n"
    "`udn` comes `udn_logical`: item i on logical channel i mod 8, all 8 sharing one queue each way.\n"
    "  --items N          items per measurement (default 50000000)\n"
    "  --bursts LIST      burst sizes, each 1..32 (default 1,8,32)\n"
    "  --capacity K       slots per queue (default 1024)\n"
    "  --elem word|desc   a 64-bit word or a 16-byte PacketDesc (default word)\n"
    "  --peers LIST       peers to measure (default boost_spsc,moodycamel and, where FastFlow's\n"
    "                     buffer is built in and --elem is word, fastflow; 'none' for none)\n";

// The peers this program can measure with items of `elem`: FastFlow's buffer holds pointers
// (words), and only a program built beside its headers has it.
std::vector<std::string> stream_peers(const std::string& elem) {
    std::vector<std::string> peers = peer_names();
    if (fastflow_stream() != nullptr && elem == "word") peers.push_back("fastflow");
    return peers;
}

struct StreamCase {
    std::string queue;
    uint32_t burst;
};

}  // namespace

WordStreamMeasure& fastflow_stream() {
    static WordStreamMeasure measure = nullptr;
    return measure;
}

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
    const std::vector<std::string> peers = stream_peers(elem);
    for (const auto& p : args.list("peers", peers)) {
        if (p == "none") continue;
        if (p == "fastflow" && fastflow_stream() == nullptr)
            throw std::invalid_argument(
                "peer 'fastflow' needs tilepipe-bench built beside FastFlow's headers (../shared/third_party/fastflow)");
        if (p == "fastflow" && elem != "word")
            throw std::invalid_argument("peer 'fastflow' holds pointers: measure it with --elem word");
        if (std::find(peers.begin(), peers.end(), p) == peers.end())
            throw std::invalid_argument("unknown peer '" + p + "' (known: boost_spsc, moodycamel, fastflow)");
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
        const auto keep = [&](const StreamResult& r) {
            mmsgs[k].push_back(r.mmsgs);
            errors += r.errors;
        };
        if (cases[k].queue == "fastflow") {  // words only (checked above)
            keep(fastflow_stream()(c.cpu_a, c.cpu_b, items, cases[k].burst, capacity));
            return;
        }
        auto run = [&]<typename T>() {
            visit_queue<T>(cases[k].queue, [&]<typename Q>(std::type_identity<Q>) {
                keep(measure_stream<T, Q>(c.cpu_a, c.cpu_b, items, cases[k].burst, capacity));
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
