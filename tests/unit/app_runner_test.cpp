// The runtime: every packet a source emits leaves through a sink or a counted drop, end of
// stream reaches every node, and every mempool is full again at the end — whatever the
// placement (cooperative tiles, a thread per node with more threads than CPUs, tiny queues).
#include <gtest/gtest.h>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/node_task.hpp"
#include "framework/runtime/sequence_credit.hpp"
#include "framework/runtime/sequence_field.hpp"
#include "framework/runtime/stop_request.hpp"

#include <algorithm>
#include <csignal>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace tp {
namespace {

RunReport run_yaml(const std::string& yaml) {
    AppConfig app = parse_app_config(yaml, "test.yaml");
    AppRunner runner(app);
    return runner.run();
}

void expect_accounted(const RunReport& r) {
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_EQ(r.packets, r.delivered + r.drops);
    EXPECT_TRUE(r.pools_full());
    for (const auto& p : r.pools) EXPECT_EQ(p.available, p.capacity) << p.name;
}

TEST(AppRunner, SynthParseDropDeliversEveryPacketAndRefillsThePool) {
    const RunReport r = run_yaml("pipeline:\n  - stage: synth\n    count: 100000\n  - parse\n  - drop\n");
    EXPECT_EQ(r.packets, 100000u);
    EXPECT_EQ(r.bytes, 100000u * 64);
    EXPECT_EQ(r.delivered, 100000u);
    ASSERT_EQ(r.stages.size(), 3u);
    EXPECT_EQ(r.stages[1].in, 100000u);
    EXPECT_EQ(r.stages[1].out, 100000u);
    EXPECT_GT(r.seconds, 0.0);
    expect_accounted(r);
}

// threads: auto polls many tiles in turn on one pinned thread per CPU; per_tile gives every
// tile its own thread, far more threads than CPUs. Both must deliver everything.
class SixtyFourNodes : public ::testing::TestWithParam<const char*> {};

TEST_P(SixtyFourNodes, PipelineOnFewCpusRunsToCompletion) {
    std::string yaml = std::string("runtime: { threads: ") + GetParam() +
                       " }\nqueue: 64\npipeline:\n  - stage: synth\n    count: 50000\n";
    for (int i = 0; i < 62; ++i) yaml += "  - pass\n";
    yaml += "  - drop\n";
    const RunReport r = run_yaml(yaml);
    EXPECT_EQ(r.stages.size(), 64u);
    EXPECT_EQ(r.delivered, 50000u);
    for (const auto& s : r.stages) {
        if (s.kind == "processor") {
            EXPECT_EQ(s.out, 50000u) << s.name;
        }
    }
    expect_accounted(r);
}
INSTANTIATE_TEST_SUITE_P(AppRunner, SixtyFourNodes, ::testing::Values("auto", "per_tile"));

TEST(AppRunner, ChainedFramesLeaveThroughTheDropSinkWithEverySegment) {
    // 128-byte segments: most frames of the capture become chains, which the drop sink must
    // free segment by segment while one-segment frames take its fast path.
    const char* dir = std::getenv("TILEPIPE_PCAPS");
    ASSERT_NE(dir, nullptr);
    const RunReport r = run_yaml(std::string("pool: { data_room: 128 }\npipeline:\n  - stage: pcap\n    file: ") + dir +
                                 "/pcpp__example.pcap\n    loop: 3\n  - parse\n  - drop\n");
    EXPECT_GT(r.packets, 0u);
    EXPECT_EQ(r.delivered, r.packets);
    expect_accounted(r);
}

TEST(AppRunner, TinyQueuesApplyBackPressureWithoutLoss) {
    const RunReport r = run_yaml(
        "queue: 2\nruntime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 20000\n"
        "    size: imix\n  - pass\n  - drop\n");
    EXPECT_EQ(r.delivered, 20000u);
    expect_accounted(r);
}

TEST(AppRunner, PoolSmallerThanTheQueuesStillCompletes) {
    // The source waits for mbufs to come back instead of dropping or spinning forever.
    const RunReport r = run_yaml(
        "pool: { mbufs: 255, cache: 0 }\nqueue: 1024\npipeline:\n  - stage: synth\n    count: 30000\n  - pass\n  - drop\n");
    EXPECT_EQ(r.delivered, 30000u);
    expect_accounted(r);
}

TEST(AppRunner, StopRequestEndsAnEndlessSourceWithEverythingDrained) {
    AppConfig app = parse_app_config("pipeline:\n  - stage: synth\n    count: 0\n  - pass\n  - drop\n", "t.yaml");
    AppRunner runner(app);
    RunOptions opts;
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        request_stop();
    });
    const RunReport r = runner.run(opts);
    stopper.join();
    clear_stop_request();
    EXPECT_GT(r.packets, 0u);
    expect_accounted(r);
}

// A second signal while the drain cannot end (the sink stands still for ten minutes): the
// tiles stop where they are and every packet in flight, in an ordered farm's reorder window,
// its queues or a map's task slots, is freed and counted. Signals are raised in the process;
// the run goes on in a thread of its own.
class CutShort : public ::testing::TestWithParam<const char*> {};

TEST_P(CutShort, ASecondSignalEndsTheDrainAtOnceWithEveryPacketCountedAndThePoolFull) {
    AppConfig app = parse_app_config(std::string("pipeline:\n  - { stage: synth, count: 0 }\n  - parse\n") + GetParam() +
                                         "  - drop\nchaos: { stall: drop, stall_ms: 600000, after_packets: 20000 }\n",
                                     "t.yaml");
    AppRunner runner(app);
    install_stop_signal_handlers(SecondSignal::CutShort);
    RunReport r;
    std::thread run([&] { r = runner.run(); });
    while (runner.live_view().report.delivered < 20000) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::raise(SIGINT);
    std::raise(SIGINT);
    run.join();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    clear_stop_request();
    EXPECT_TRUE(r.header.interrupted);
    EXPECT_EQ(r.header.signal, SIGINT);
    ASSERT_TRUE(r.header.cut_short);
    uint64_t lost = 0;
    for (const CutLoss& c : r.cut_losses) lost += c.lost;
    EXPECT_GT(lost, 0u);
    EXPECT_EQ(r.drops, lost);
    EXPECT_TRUE(r.failures.empty());
    expect_accounted(r);
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, CutShort,
    ::testing::Values("  - farm: { name: fw, workers: 3, worker: [pass] }\n",
                      "  - farm: { name: fw, workers: 3, dispatch: flow_hash, collect: ordered, worker: [pass] }\n",
                      "  - map: { name: m, workers: 4, worker: [pass] }\n"));

TEST(AppRunner, AChaosStallHoldsItsNodeStillOnceAndTheRunLosesNothing) {
    const RunReport r = run_yaml(
        "pool: { mbufs: 1023, cache: 0 }\npipeline:\n  - { stage: synth, count: 50000 }\n"
        "  - farm: { name: fw, workers: 2, worker: [pass] }\n  - drop\n"
        "chaos: { stall: fw.1, stall_ms: 50, after_packets: 100 }\n");
    EXPECT_EQ(r.delivered, 50000u);
    EXPECT_EQ(r.drops, 0u);
    for (const TileReport& t : r.tiles) {
        if (t.node == "fw.1") EXPECT_GE(t.stalled_ms, 50.0);
        else EXPECT_EQ(t.stalled_ms, 0.0) << t.node;
    }
    expect_accounted(r);
}

// Live telemetry's view, taken from another thread while the tiles run (under ThreadSanitizer
// in the tsan suite): counts only grow, the channels tell their fill, and once the run is over
// the view is the report's.
TEST(AppRunner, ALiveViewFromAnotherThreadSeesTheCountsGrowAndEndsAtTheReport) {
    AppConfig app = parse_app_config("pipeline:\n  - stage: synth\n    count: 300k\n  - pass\n  - drop\n", "t.yaml");
    AppRunner runner(app);
    EXPECT_FALSE(runner.live_view().started);
    std::atomic<bool> done{false};
    std::vector<LiveView> views;
    std::thread reader([&] {
        while (!done.load(std::memory_order_acquire)) {
            views.push_back(runner.live_view());
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    const RunReport r = runner.run();
    done.store(true, std::memory_order_release);
    reader.join();
    ASSERT_FALSE(views.empty());
    for (size_t i = 1; i < views.size(); ++i) {
        EXPECT_GE(views[i].report.packets, views[i - 1].report.packets);
        EXPECT_GE(views[i].report.delivered, views[i - 1].report.delivered);
        ASSERT_EQ(views[i].queued.size(), r.channels.size());
        for (size_t c = 0; c < r.channels.size(); ++c) {
            EXPECT_GE(views[i].queued[c], 0);
            EXPECT_LE(views[i].queued[c], int64_t(r.channels[c].capacity));
        }
    }
    const LiveView after = runner.live_view();
    EXPECT_TRUE(after.started);
    EXPECT_TRUE(after.finished);
    EXPECT_EQ(after.report.packets, r.packets);
    EXPECT_EQ(after.report.delivered, r.delivered);
    EXPECT_DOUBLE_EQ(after.report.seconds, r.seconds);
    // The pool's fill (DPDK's lock-free count, for monitoring): every mbuf back once it is over.
    ASSERT_EQ(after.report.pools.size(), 1u);
    EXPECT_EQ(after.report.pools[0].available, after.report.pools[0].capacity);
    for (const LiveView& v : views)
        for (const PoolReport& p : v.report.pools) EXPECT_LE(p.available, p.capacity);
    for (int64_t q : after.queued) EXPECT_EQ(q, 0);
}

// What happened between two views: differences of the counts, busy shares over the interval.
TEST(LiveView, ADeltaHoldsTheIntervalsCountsAndBusyShare) {
    RunReport before, now;
    before.seconds = 1.0, now.seconds = 3.0;
    before.packets = 100, now.packets = 700;
    before.delivered = 90, now.delivered = 690;
    before.stages.resize(1), now.stages.resize(1);
    before.stages[0].out = 100, now.stages[0].out = 700;
    before.stages[0].busy_fraction = 0.5, now.stages[0].busy_fraction = 0.75;  // 0.5 s, then 2.25 s
    before.stages[0].drop_reasons["bad"] = 1, now.stages[0].drop_reasons["bad"] = 4;
    const RunReport d = report_delta(now, before);
    EXPECT_DOUBLE_EQ(d.seconds, 2.0);
    EXPECT_EQ(d.packets, 600u);
    EXPECT_EQ(d.delivered, 600u);
    EXPECT_EQ(d.stages[0].out, 600u);
    EXPECT_DOUBLE_EQ(d.stages[0].busy_fraction, 0.875);  // 1.75 s of the 2 s
    EXPECT_EQ(d.stages[0].drop_reasons.at("bad"), 3u);
    EXPECT_DOUBLE_EQ(d.mpps(), 600 / 2.0 / 1e6);
}

// An interval's latency: the samples its buckets gained, summarised from their upper bounds.
TEST(LiveView, ALatencyDeltaHoldsTheSamplesTakenInBetween) {
    LatencyReport before, now;
    before.mode = now.mode = "all";
    before.buckets = {{1.0, 10}, {2.0, 5}};
    now.buckets = {{1.0, 10}, {2.0, 105}, {4.0, 1}, {8.0, 1}};
    const LatencyReport d = latency_delta(now, before);
    EXPECT_EQ(d.mode, "all");
    ASSERT_EQ(d.buckets.size(), 3u);  // the 1 us bucket gained nothing
    EXPECT_EQ(d.end_to_end.samples, 102u);
    EXPECT_DOUBLE_EQ(d.end_to_end.p50, 2.0);
    EXPECT_DOUBLE_EQ(d.end_to_end.p99, 4.0);    // rank 101 of 102
    EXPECT_DOUBLE_EQ(d.end_to_end.p999, 8.0);
    EXPECT_DOUBLE_EQ(d.end_to_end.max, 8.0);
    EXPECT_DOUBLE_EQ(d.end_to_end.mean, (2.0 * 100 + 4 + 8) / 102);
}

// The fields README's `--json OUT` paragraph documents: "" lists the top-level ones; a field
// written as "`name`: ..." is an object or a list of objects (at the top, or inside the objects
// of another list) and opens the list of its fields, which runs to the next such field.
std::map<std::string, std::vector<std::string>> readme_json_fields() {
    const char* root = std::getenv("TILEPIPE_SOURCE_ROOT");
    if (root == nullptr) throw std::runtime_error("TILEPIPE_SOURCE_ROOT is not set");
    std::ifstream in(std::string(root) + "/README.md");
    const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t begin = readme.find("- `--json OUT` writes the report as JSON");
    if (begin == std::string::npos) throw std::runtime_error("README.md has no `--json OUT` paragraph");
    const size_t end = readme.find("\n- ", begin + 1);
    std::string text = readme.substr(begin, end - begin);
    text = text.substr(text.find("JSON"));  // past the option's own name
    std::map<std::string, std::vector<std::string>> fields;
    std::string section;
    const std::regex name("`([a-z_0-9]+)`(:?)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
        const std::string field = (*it)[1];
        const bool opens_list = (*it)[2] == ":";
        fields[opens_list ? "" : section].push_back(field);
        if (opens_list) section = field;
    }
    return fields;
}

// The objects `section` names: the top-level object or list of that name, or the lists of that
// name inside the objects of other top-level lists.
nlohmann::json objects_named(const nlohmann::json& j, const std::string& section) {
    nlohmann::json objects = nlohmann::json::array();
    const auto add = [&](const nlohmann::json& v) {
        if (v.is_object()) objects.push_back(v);
        else
            for (const auto& o : v) objects.push_back(o);
    };
    if (j.contains(section)) add(j[section]);
    else
        for (const auto& outer : j)
            if (outer.is_array())
                for (const auto& o : outer)
                    if (o.is_object() && o.contains(section)) add(o[section]);
    return objects;
}

TEST(AppRunner, ReportJsonCarriesEveryFieldReadmeDocumentsAndNoOther) {
    const auto documented = readme_json_fields();
    // Guards the parse itself: the paragraph names a dozen top-level fields and the lists.
    ASSERT_GE(documented.at("").size(), 12u);
    for (const char* list : {"header", "stages", "tiles", "channels", "failures", "ports", "pools"})
        ASSERT_GE(documented.at(list).size(), 3u) << list;

    // A run that fills every list: a node fails, and the sink sends by port.
    const RunReport r = run_yaml(
        "app: j\nruntime: { fuse: never }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - { stage: throw_after, packets: 1000 }\n  - { stage: port_out, devices: \"net_null_j0, net_null_j1\" }\n");
    const nlohmann::json j = to_json(r);
    const auto listed = [](const std::vector<std::string>& names, const std::string& k) {
        return std::find(names.begin(), names.end(), k) != names.end();
    };
    for (const auto& [section, names] : documented) {
        if (section.empty()) {
            for (const auto& k : names)  // an object or a list is checked below, where it lives
                if (documented.count(k) == 0) EXPECT_TRUE(j.contains(k)) << "top-level field " << k;
            for (const auto& [k, v] : j.items()) EXPECT_TRUE(listed(names, k)) << "undocumented top-level field " << k;
            continue;
        }
        const nlohmann::json objects = objects_named(j, section);
        ASSERT_TRUE(!objects.empty()) << section << ": " << j.dump();
        for (const auto& o : objects) {
            for (const auto& k : names) EXPECT_TRUE(o.contains(k)) << section << " has no " << k << ": " << o;
            for (const auto& [k, v] : o.items())
                EXPECT_TRUE(listed(names, k) || documented.count(k) != 0) << "undocumented field " << section << "." << k;
        }
    }
    EXPECT_EQ(j["app"], "j");
    EXPECT_DOUBLE_EQ(j["gbps_l1"].get<double>(), (double(r.delivered) * (64 + 24) * 8) / r.seconds / 1e9);
    EXPECT_DOUBLE_EQ(j["offered_gbps_l1"].get<double>(), (double(r.packets) * (64 + 24) * 8) / r.offered_seconds / 1e9);
}

// --trace N: the first N packets the sources emit, each followed to its end across the
// farm's tiles (threads of their own here), without changing what the run counts; the other
// packets pass untraced.
TEST(AppRunner, TracedPacketsAreFollowedToTheirEndAcrossTiles) {
    AppConfig app = parse_app_config(
        "runtime: { threads: per_tile, fuse: never }\npipeline:\n  - { stage: synth, count: 20000 }\n  - parse\n"
        "  - farm: { workers: 3, dispatch: flow_hash, collect: ordered, worker: [pass, { stage: sample, every: 2 }] }\n"
        "  - drop\n",
        "test.yaml");
    app.trace = 40;
    AppRunner runner(app);
    const RunReport r = runner.run();
    expect_accounted(r);
    ASSERT_EQ(r.trace.packets.size(), 40u);
    size_t dropped = 0;
    for (const TracedPacket& p : r.trace.packets) {
        ASSERT_GE(p.path.size(), 4u) << p.packet;
        EXPECT_EQ(p.path[0].stage, "synth");
        EXPECT_EQ(p.path[0].step, "emitted");
        EXPECT_EQ(p.path[1].stage, "parse");
        const std::string& worker = p.path[2].node;
        EXPECT_EQ(p.path[2].stage, worker + "/pass");
        EXPECT_EQ(p.path[3].stage, worker + "/sample");
        if (p.end() == "dropped") {
            ++dropped;
            EXPECT_EQ(p.path.size(), 4u);
            EXPECT_EQ(p.path[3].reason, "sampled_out");
        } else {
            EXPECT_EQ(p.end(), "delivered");
            ASSERT_EQ(p.path.size(), 5u);
            EXPECT_EQ(p.path[4].stage, "drop");
        }
    }
    EXPECT_GT(dropped, 0u);
    EXPECT_LT(dropped, 40u);
}

TEST(AppRunner, EveryNodeCountsTheBytesItPassesOn) {
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000, size: 100 }\n  - pass\n"
                                 "  - { stage: sample, every: 2 }\n  - drop\n");
    ASSERT_EQ(r.stages.size(), 4u);
    for (const auto& s : r.stages) EXPECT_EQ(s.bytes, s.out * 100) << s.name;
    EXPECT_EQ(r.delivered_bytes, 500u * 100);
}

TEST(AppRunner, ASinksBytesAndTheHeadlineCountOnlyWhatItDelivered) {
    // Half the packets are dropped at the sink (as a full TX ring would): the delivered bit
    // rate must not count their bytes while the packet rate leaves them out.
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000, size: 100 }\n"
                                 "  - { stage: refuse, every: 2 }\n");
    ASSERT_EQ(r.stages.size(), 2u);
    EXPECT_EQ(r.stages[1].out, 500u);
    EXPECT_EQ(r.stages[1].drops, 500u);
    EXPECT_EQ(r.stages[1].bytes, 500u * 100);
    EXPECT_EQ(r.delivered_bytes, 500u * 100);
    EXPECT_DOUBLE_EQ(r.gbps_l2(), 500.0 * 100 * 8 / r.seconds / 1e9);
    expect_accounted(r);
}

TEST(AppRunner, ARunWithoutLatencySamplesPrintsNoPercentiles) {
    // Every packet dropped at the sink: zeros would read as a latency of 0 us.
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n  - { stage: refuse, every: 1 }\n");
    EXPECT_EQ(r.delivered, 0u);
    EXPECT_EQ(r.latency.end_to_end.samples, 0u);
    const std::string table = format_table(r);
    EXPECT_NE(table.find("latency us (sample 64, 0 samples): none"), std::string::npos) << table;
    EXPECT_EQ(table.find("p50"), std::string::npos) << table;
}

TEST(AppRunner, SetupBeforeAndAfterTheTrafficIsOutsideTheTimedWindow) {
    // Opening takes 400 ms and closing 600 ms; the packets themselves take a few milliseconds.
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n"
                                 "  - { stage: slow_setup, open_ms: 400, close_ms: 600 }\n  - drop\n");
    EXPECT_EQ(r.delivered, 1000u);
    EXPECT_GT(r.seconds, 0.0);
    EXPECT_LT(r.seconds, 0.3) << "the window counts setup";
    EXPECT_LE(r.offered_seconds, r.seconds);
    EXPECT_GE(r.setup_s, 0.95);
}

TEST(AppRunner, AStageAndItsTileReportOneBusyFraction) {
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 200000 }\n  - parse\n  - drop\n");
    ASSERT_EQ(r.tiles.size(), r.stages.size());
    for (size_t i = 0; i < r.stages.size(); ++i) {
        EXPECT_EQ(r.stages[i].busy_fraction, r.tiles[i].busy_fraction) << r.stages[i].name;
        EXPECT_GT(r.stages[i].busy_fraction, 0.0) << r.stages[i].name;
        EXPECT_LE(r.stages[i].busy_fraction, 1.0) << r.stages[i].name;
    }
}

TEST(AppRunner, TheProgressLineReadsTheRunningCountersAndSaysWhatEachNumberIs) {
    // Lines every 10 ms from the start: the sampling thread reads the tiles' counters while
    // they run (under ThreadSanitizer too).
    AppConfig app = parse_app_config("pipeline:\n  - { stage: synth, count: 3M }\n  - parse\n  - drop\n", "t.yaml");
    AppRunner runner(app);
    RunOptions opts;
    std::vector<std::string> lines;
    opts.progress = [&lines](const std::string& l) { lines.push_back(l); };
    opts.progress_after = std::chrono::milliseconds(0);
    opts.progress_every = std::chrono::milliseconds(10);
    const RunReport r = runner.run(opts);
    EXPECT_EQ(r.delivered, 3000000u);
    ASSERT_FALSE(lines.empty());
    const std::regex labelled("(waiting for the first packet|[0-9.]+ m?s: [0-9.]+( M)? packets; last .* average .*(left|all emitted, draining))");
    for (const auto& l : lines) EXPECT_TRUE(std::regex_match(l, labelled)) << l;
}

TEST(AppRunner, FarmAndMapEmittersAndCollectorsAppearInTheReportWithThePacketsTheyPassed) {
    for (const char* pattern : {"farm", "map"}) {
        SCOPED_TRACE(pattern);
        const RunReport r = run_yaml(std::string("runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 20000 }\n  - ") +
                                     pattern + ":\n      workers: 2\n      worker: [pass]\n  - drop\n");
        int emitters = 0, collectors = 0;
        std::vector<int> workers;  // each tile's worker index (-1: not a worker), for --metrics' label
        for (const TileReport& t : r.tiles) workers.push_back(t.worker);
        EXPECT_EQ(workers, (std::vector<int>{-1, -1, 0, 1, -1, -1})) << "synth, emitter, 2 workers, collector, drop";
        for (const TileReport& t : r.tiles) {
            if (t.role.empty()) continue;
            (t.role == "emitter" ? emitters : collectors) += 1;
            EXPECT_EQ(t.packets, 20000u) << t.node;
            EXPECT_EQ(t.bytes, 20000u * 64) << t.node;
            EXPECT_NE(format_table(r).find("\n" + t.node + " "), std::string::npos) << format_table(r);
        }
        EXPECT_EQ(emitters, 1);
        EXPECT_EQ(collectors, 1);
    }
}

TEST(AppRunner, AFarmsCollectorThatFeedsTheNextFarmIsReportedAsBoth) {
    // Folded, the first farm's collector dispatches to the second farm's workers.
    const RunReport r = run_yaml("runtime: { fuse: always }\npipeline:\n  - { stage: synth, count: 20000 }\n"
                                 "  - farm: { name: a, workers: 2, worker: [pass] }\n"
                                 "  - farm: { name: b, workers: 2, worker: [pass] }\n  - drop\n");
    std::map<std::string, std::string> role;
    for (const TileReport& t : r.tiles) role[t.node] = t.role;
    ASSERT_EQ(role.count("a.collector"), 1u) << format_table(r);
    EXPECT_EQ(role["a.collector"], "collector+emitter");
    EXPECT_NE(format_table(r).find("(collector+emitter)"), std::string::npos) << format_table(r);
    expect_accounted(r);
}

TEST(AppRunner, EveryTileReportsItsBusyShareAndEveryChannelItsHops) {
    // A farm: the emitter and collector run no stage, yet their tiles work.
    const RunReport r = run_yaml(
        "topology: epiphany16\nplacement: snake\nruntime: { fuse: never }\npipeline:\n  - stage: synth\n"
        "    count: 200000\n  - farm:\n      workers: 2\n      worker: [pass]\n  - drop\n");
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(j["tiles"].size(), 6u);  // synth, emitter, 2 workers, collector, drop
    for (const auto& t : j["tiles"]) {
        EXPECT_GT(t["busy_fraction"].get<double>(), 0.0) << t["node"];
        EXPECT_LE(t["busy_fraction"].get<double>(), 1.0) << t["node"];
        EXPECT_GE(t["cpu"].get<int>(), 0) << t["node"];
        EXPECT_EQ(t["tile"].size(), 2u);
    }
    ASSERT_EQ(j["channels"].size(), 6u);  // synth->emitter, emitter->2 workers, 2 workers->collector, collector->drop
    // On a mesh a channel's hops are the XY-routing distance between its two tiles; snake order
    // puts the six nodes on (0,0) (1,0) (2,0) (3,0) (3,1) (2,1).
    std::map<std::string, std::pair<int, int>> tile;
    for (const auto& t : j["tiles"]) tile[t["node"]] = {t["tile"][0].get<int>(), t["tile"][1].get<int>()};
    EXPECT_EQ(tile.at("drop"), (std::pair<int, int>{2, 1}));
    int hops_total = 0;
    for (const auto& c : j["channels"]) {
        const auto [fx, fy] = tile.at(c["from"]);
        const auto [tx, ty] = tile.at(c["to"]);
        EXPECT_EQ(c["hops"].get<int>(), std::abs(fx - tx) + std::abs(fy - ty)) << c["from"] << "->" << c["to"];
        hops_total += c["hops"].get<int>();
    }
    // synth-emitter 1, emitter-workers 1 and 2, workers-collector 2 and 1, collector-drop 1.
    EXPECT_EQ(hops_total, 8);
}

TEST(AppRunner, AFarmOpeningThePipelineReadsOnePortQueuePerWorker) {
    // RSS style: no emitter; worker w's port source reads RX queue w of one net_pcap port whose
    // queues each replay the capture, so every worker sees the whole capture once.
    const char* pcaps = std::getenv("TILEPIPE_PCAPS");
    ASSERT_NE(pcaps, nullptr);
    const std::string cap = std::string(pcaps) + "/pcpp__example.pcap";
    const RunReport once = run_yaml("pipeline:\n  - stage: pcap\n    file: " + cap + "\n  - drop\n");
    ASSERT_GT(once.packets, 0u);
    const RunReport r = run_yaml("pipeline:\n  - farm:\n      name: rx\n      workers: 3\n      emitter: false\n"
                                 "      worker:\n        - stage: port\n          file: " + cap +
                                 "\n        - parse\n  - drop\n");
    EXPECT_EQ(r.packets, 3 * once.packets);
    EXPECT_EQ(r.delivered, 3 * once.packets);
    for (const auto& s : r.stages)
        if (s.stage == "port") EXPECT_EQ(s.out, once.packets) << s.name;
    expect_accounted(r);

    // Run to completion on both sides: each worker also sends on a TX queue of its own.
    const RunReport rtc = run_yaml("pipeline:\n  - farm:\n      workers: 2\n      emitter: false\n      collect: none\n"
                                   "      worker:\n        - stage: port\n          file: " + cap +
                                   "\n        - parse\n        - { stage: port_out, device: net_null_rtc }\n");
    EXPECT_EQ(rtc.delivered, 2 * once.packets);
    for (const auto& s : rtc.stages)
        if (s.stage == "port_out") EXPECT_EQ(s.out, once.packets) << s.name;
    expect_accounted(rtc);
}

TEST(AppRunner, TheDefaultPoolHoldsEveryDescriptorOfThePortsRings) {
    // A NIC fills its RX ring from the app's pool when it starts: a bigger ring needs as many
    // more mbufs, once per queue (here one per worker of an RSS farm).
    const auto pool_for = [](const std::string& rxd) {
        const AppConfig app = parse_app_config(
            "pipeline:\n  - farm:\n      workers: 2\n      emitter: false\n      worker:\n"
            "        - { stage: port, device: net_null_pool, rxd: " + rxd + " }\n  - drop\n", "t.yaml");
        return uint64_t(default_pool_mbufs(app, plan_app(app)));
    };
    EXPECT_GE(pool_for("32768"), pool_for("64") + 2 * (32768 - 64));
}

TEST(AppRunner, TheDefaultPoolOfAFarmOf1024WorkersFitsInAGibibyteWithoutHugepages) {
    // Its queues alone could hold 2M descriptors: sized for every queue full, the pool took
    // 16 GiB and the host ran out of memory. What is in flight is capped instead.
    const AppConfig app = parse_app_config(
        "pipeline:\n  - synth\n  - farm: { workers: 1024, worker: [pass] }\n  - drop\n", "t.yaml");
    const AppPlan plan = plan_app(app);
    MbufPoolSpec spec;
    spec.mbufs = default_pool_mbufs(app, plan);
    EXPECT_LE(MbufPool::footprint(spec), 1ull << 30) << spec.mbufs << " mbufs";
    EXPECT_GE(spec.mbufs, pool_sizing(app, plan).minimum + kInFlightCap / 2);
}

TEST(AppRunner, ADefaultPoolTooBigForTheHostIsRefusedWithOnlyThePoolThatFits) {
    // The host is a byte short of what the default pool needs: a smaller pool fits, so the
    // message names it, and only it (not also "free memory", which is for when none fits).
    const AppConfig app =
        parse_app_config("pipeline:\n  - synth\n  - farm: { workers: 64, worker: [pass] }\n  - drop\n", "t.yaml");
    const AppPlan plan = plan_app(app);
    MbufPoolSpec spec;
    spec.mbufs = default_pool_mbufs(app, plan);
    ASSERT_GT(spec.mbufs, 2 * pool_sizing(app, plan).minimum);  // half of it still works
    spec.cache = app.pool.cache;
    spec.data_room = static_cast<uint16_t>(app.pool.data_room);
    EalOptions eal;
    eal.memory_bytes = MbufPool::footprint(spec);
    std::string msg;
    try {
        check_pool_memory(app, plan, eal, (eal_memory_mb(eal) << 20) - 1);
    } catch (const std::runtime_error& e) {
        msg = e.what();
    }
    EXPECT_TRUE(std::regex_search(msg, std::regex("; set pool.mbufs to ([0-9]+) or fewer \\(--set pool.mbufs=\\1\\)$")))
        << msg;
}

TEST(AppRunner, TheDefaultPoolHoldsTheRingsOfEveryDeviceAPortSinkSendsOn) {
    const auto pool_for = [](const std::string& devices) {
        const AppConfig app = parse_app_config(
            "pipeline:\n  - synth\n  - { stage: port_out, txd: 8192, devices: \"" + devices + "\" }\n", "t.yaml");
        return uint64_t(default_pool_mbufs(app, plan_app(app)));
    };
    EXPECT_GE(pool_for("net_null_a0, net_null_a1, net_null_a2"), pool_for("net_null_a0") + 2 * 8192);
}

TEST(AppRunner, PacketsLostBeforeTheSourceHaveTheirOwnLineAndField) {
    RunReport r;
    r.app = "lost";
    r.packets = r.delivered = 90;
    StageReport src;
    src.name = src.stage = "port";
    src.kind = "source";
    src.out = 90;
    src.lost_before = 10;
    r.stages.push_back(src);
    r.lost_before_source = 10;
    const std::string table = format_table(r);
    EXPECT_NE(table.find("    lost before source: 10\n"), std::string::npos) << table;
    EXPECT_NE(table.find("\nlost before source 10 "), std::string::npos) << table;
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["lost_before_source"], 10);
    EXPECT_EQ(j["stages"][0]["lost_before"], 10);
    EXPECT_EQ(j["delivered"].get<uint64_t>() + j["drops"].get<uint64_t>() + j["lost_before_source"].get<uint64_t>(), 100u);
}

// Stages that misbehave on purpose (tests/support/faulty_stages.cpp) show what the runtime
// promises when a stage fails: the run ends, the report says where and why, and every packet
// is still accounted for.

TEST(AppRunnerFailure, AStageThatThrowsStopsTheRunAndTheReportNamesTheNodeAndTheError) {
    // An endless source: only the failure can end this run.
    const RunReport r = run_yaml(
        "runtime: { fuse: never }\npipeline:\n  - stage: synth\n    count: 0\n  - parse\n"
        "  - { stage: throw_after, name: boom, packets: 5000, message: checksum table corrupt }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].node, "boom");
    EXPECT_EQ(r.failures[0].error, "checksum table corrupt");
    EXPECT_GE(r.failures[0].dropped, 1u) << "the burst it threw on is in flight";
    EXPECT_FALSE(stop_requested()) << "the stop the failure asked for ends with the run";
    for (const auto& s : r.stages)
        if (s.name == "boom") EXPECT_LE(s.out, 5000u);
    EXPECT_EQ(r.packets, r.delivered + r.drops);
    expect_accounted(r);
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(j["failures"].size(), 1u);
    EXPECT_EQ(j["failures"][0]["node"], "boom");
    EXPECT_EQ(j["failures"][0]["error"], "checksum table corrupt");
    EXPECT_EQ(j["failures"][0]["dropped"], r.failures[0].dropped);
    EXPECT_NE(format_table(r).find("node 'boom' failed: checksum table corrupt"), std::string::npos) << format_table(r);
}

TEST(AppRunnerFailure, AFailureInOneStageOfAFusedChainIsTheNodesFailure) {
    const RunReport r = run_yaml(
        "runtime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - { stage: throw_after, packets: 100 }\n  - pass\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].error, "deliberate failure");
    expect_accounted(r);
}

TEST(AppRunnerFailure, AFailingWorkerOfAnOrderedFarmLetsTheOthersDrainInOrder) {
    // The collector waits for numbers the failed worker will never return; at end of stream
    // it releases what it holds, so nothing stays in its window.
    const RunReport r = run_yaml(
        "runtime: { fuse: never, threads: per_tile }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - farm:\n      name: rtc\n      workers: 3\n      dispatch: round_robin\n      collect: ordered\n"
        "      worker:\n        - { stage: throw_after, packets: 3000 }\n  - drop\n");
    ASSERT_GE(r.failures.size(), 1u);
    for (const auto& f : r.failures) EXPECT_EQ(f.node.rfind("rtc.", 0), 0u) << f.node;
    expect_accounted(r);
}

TEST(AppRunnerFailure, AFailingMapWorkerKeepsTheMapFlowingUntilTheStop) {
    const RunReport r = run_yaml(
        "runtime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - map:\n      workers: 4\n      multicast: tree\n      worker:\n        - { stage: throw_after, packets: 2000 }\n"
        "  - drop\n");
    ASSERT_GE(r.failures.size(), 1u);
    expect_accounted(r);
}

TEST(AppRunnerFailure, AStageFailingToCloseFailsTheRunAfterEverythingWasDelivered) {
    const RunReport r = run_yaml(
        "pipeline:\n  - stage: synth\n    count: 10000\n  - { stage: throw_after, name: late, in_close: true, "
        "message: cannot flush }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].error, "cannot flush");
    EXPECT_EQ(r.failures[0].dropped, 0u);
    EXPECT_EQ(r.delivered, 10000u);
    expect_accounted(r);
}

TEST(AppRunnerFailure, AnExceptionThatIsNotAStdExceptionIsTheNodesFailureNamingIt) {
    const RunReport r = run_yaml(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 0 }\n"
        "  - { stage: throw_after, name: boom, packets: 100, not_std: true }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].node, "boom");
    EXPECT_EQ(r.failures[0].error, "an exception that is not a std::exception");
    expect_accounted(r);
}

TEST(AppRunnerFailure, AStageClosingWithAnyExceptionAfterItsNodeFailedLetsTheOthersClose) {
    // A worker's chain is one node: its first stage fails, then the node closes its stages and
    // the second throws an int from close(); the node's failure stays the first error.
    const RunReport r = run_yaml(
        "pipeline:\n  - { stage: synth, count: 0 }\n  - farm:\n      name: fw\n      workers: 1\n      worker:\n"
        "        - { stage: throw_after, packets: 100, message: first }\n"
        "        - { stage: throw_after, in_close: true, not_std: true }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].node, "fw.0");
    EXPECT_EQ(r.failures[0].error, "first");
    expect_accounted(r);
}

// A failed start: the stages opened before the one that failed are closed, newest first.
// close_mark stages append their node's name to a file when closed.
struct CloseMarks {
    std::string path = "/tmp/tp_runner_close_marks_" + std::to_string(getpid());
    CloseMarks() { std::remove(path.c_str()); }
    ~CloseMarks() { std::remove(path.c_str()); }
    std::string mark(const std::string& name) const {
        return "  - { stage: close_mark, name: " + name + ", file: '" + path + "' }\n";
    }
    std::string read() const {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

std::string start_error(const std::string& yaml) {
    try {
        AppConfig app = parse_app_config(yaml, "test.yaml");
        AppRunner runner(app);
    } catch (const LocatedError& e) {
        return e.what();
    }
    ADD_FAILURE() << "the runner started";
    return "";
}

TEST(AppRunnerFailure, AStageFailingToOpenIsNamedAndTheStagesOpenedBeforeItAreClosedNewestFirst) {
    const CloseMarks marks;
    const std::string error = start_error(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" + marks.mark("first") +
        marks.mark("second") + "  - { stage: throw_after, name: boom, in_open: true, message: no table }\n" +
        marks.mark("after") + "  - drop\n");
    EXPECT_EQ(error, "test.yaml:6:14: stage 'boom' (throw_after) failed to open: no table");
    EXPECT_EQ(marks.read(), "second\nfirst\n") << "'after' never opened, so it is not closed";
}

TEST(AppRunnerFailure, AStageOfAWorkerChainFailingToOpenIsNamedWithItsNode) {
    const std::string error = start_error(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n"
        "  - farm:\n      name: fw\n      workers: 2\n      worker:\n        - pass\n"
        "        - { stage: throw_after, in_open: true, not_std: true }\n  - drop\n");
    EXPECT_NE(error.find("stage 'throw_after' of node 'fw.0' failed to open: an exception that is not a std::exception"),
              std::string::npos)
        << error;
}

TEST(AppRunnerFailure, AStageFailingToCloseAfterAFailedStartDoesNotKeepTheOthersOpen) {
    const CloseMarks marks;
    const std::string error = start_error(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" + marks.mark("first") +
        "  - { stage: throw_after, name: stuck, in_close: true, message: cannot flush }\n" + marks.mark("second") +
        "  - { stage: throw_after, name: boom, in_open: true, message: no table }\n  - drop\n");
    EXPECT_NE(error.find("stage 'boom' (throw_after) failed to open: no table"), std::string::npos)
        << "the open failure is the one reported: " << error;
    EXPECT_EQ(marks.read(), "second\nfirst\n");
}

TEST(AppRunnerFailure, ARunnerThatNeverRanClosesItsStages) {
    const CloseMarks marks;
    {
        AppConfig app = parse_app_config("runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" +
                                             marks.mark("first") + marks.mark("second") + "  - drop\n",
                                         "test.yaml");
        AppRunner runner(app);
        EXPECT_EQ(marks.read(), "");
    }
    EXPECT_EQ(marks.read(), "second\nfirst\n");
}

TEST(AppRunnerFailure, StagesAreClosedOnceWhenTheRunRan) {
    const CloseMarks marks;
    const RunReport r = run_yaml("runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" +
                                 marks.mark("first") + "  - drop\n");
    EXPECT_EQ(r.delivered, 100u);
    EXPECT_EQ(marks.read(), "first\n");
}

TEST(AppRunnerFailure, AMapWorkersStagesAreClosedAtTheEndOfTheStream) {
    const CloseMarks marks;
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n  - map:\n      name: m\n"
                                 "      workers: 3\n      worker:\n    " + marks.mark("mark") + "  - drop\n");
    EXPECT_EQ(r.delivered, 1000u);
    EXPECT_EQ(marks.read(), "mark\nmark\nmark\n") << "once per worker";
    expect_accounted(r);
}

TEST(AppRunnerFailure, AMapWorkerStageFailingToCloseFailsItsNode) {
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n  - map:\n      name: m\n"
                                 "      workers: 2\n      worker:\n"
                                 "        - { stage: throw_after, in_close: true, message: cannot flush }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 2u);
    for (const auto& f : r.failures) EXPECT_EQ(f.error, "cannot flush") << f.node;
    EXPECT_EQ(r.delivered, 1000u);
    expect_accounted(r);
}

// An ordered collector driven by hand: a small pool, its input and output channels, and the
// spec of a NodeTask reading one and writing the other through a reorder window of 64.
struct HandCollector {
    static MbufPoolSpec pool_spec(const char* name) {
        MbufPoolSpec ps;
        ps.name = name;
        ps.mbufs = 1023;
        ps.cache = 0;
        return ps;
    }
    static ChannelSpec channel_spec() {
        ChannelSpec cs;
        cs.capacity = 64;
        return cs;
    }
    explicit HandCollector(const char* pool_name) : pool(pool_spec(pool_name)) {
        spec.inputs = {in.get()};
        spec.outputs = {out.get()};
        spec.reorder_window = 64;
    }
    MbufPool pool;
    std::unique_ptr<Channel<PacketDesc>> in = make_desc_channel(channel_spec()), out = make_desc_channel(channel_spec());
    NodeTaskSpec spec;
};

TEST(AppRunnerFailure, AnOrderedCollectorWhoseReorderCheckFailsGivesBackEveryPacketItHeld) {
    // Numbers 1, 2, 2: none is in order yet (0 is missing) and 2 arrives twice, which the
    // reorder window refuses. The collector's node fails; the packet it was inserting, the one
    // still in hand and the one the window stored all go back to the pool, counted.
    HandCollector h("reorder_failure");
    MbufPool& pool = h.pool;
    auto& in = h.in;
    auto& out = h.out;
    NodeTask collector(std::move(h.spec));
    const int offset = sequence_field_offset();
    rte_mbuf* m[3];
    ASSERT_TRUE(alloc_packets(pool.get(), m, 3));
    PacketDesc d[3];
    const uint32_t numbers[3] = {1, 2, 2};
    for (int i = 0; i < 3; ++i) {
        packet_sequence(m[i], offset) = numbers[i];
        d[i] = PacketDesc{m[i], 0, 64, 0, 0};
    }
    ASSERT_EQ(in->try_send_burst(d, 3), 3u);
    in->close();
    EXPECT_THROW(collector.poll(), std::logic_error);
    collector.record_failure("sequence number delivered twice");
    for (int polls = 0; !collector.finished() && polls < 100; ++polls) collector.poll_failed();
    EXPECT_TRUE(collector.finished());
    EXPECT_EQ(collector.failure_drops(), 3u);
    EXPECT_TRUE(out->closed()) << "downstream learns the end of the stream";
    EXPECT_EQ(pool.available(), pool.capacity());
}

// An ordered farm fed on demand: its emitter, held back by the collector's window, idles and
// its thread parks; the collector's next release must wake it (SequenceCredit). A sleeper on
// the emitter thread's doorbell says it is held, announces, re-checks the credit and parks for
// up to 5 s; the collector then receives the number it waits for. A lost wake-up sleeps out
// the 5 s.
TEST(SequenceCredit, ACollectorReleasingNumbersWakesTheDispatcherItHeldBack) {
    HandCollector h("credit_wake");
    MbufPool& pool = h.pool;
    auto& in = h.in;
    auto& out = h.out;
    Doorbell bell;
    SequenceCredit credit;
    credit.allowance = 64;
    credit.dispatcher_bell = &bell;
    h.spec.releasing = &credit;
    NodeTask collector(std::move(h.spec));

    rte_mbuf* m = nullptr;
    ASSERT_TRUE(alloc_packets(pool.get(), &m, 1));
    packet_sequence(m, sequence_field_offset()) = 0;
    const PacketDesc d{m, 0, 64, 0, 0};
    std::atomic<bool> parked{false};
    uint32_t seen = 0;
    std::chrono::steady_clock::time_point woke;
    std::thread dispatcher([&] {
        credit.held.store(true, std::memory_order_relaxed);  // as a held-back dispatcher does
        bell.prepare_park();
        parked.store(true, std::memory_order_release);
        // relaxed, as the dispatcher reads it: prepare_park's fence orders it after the announce.
        if (credit.released.load(std::memory_order_relaxed) == 0) bell.park(std::chrono::seconds(5));
        else bell.cancel_park();
        woke = std::chrono::steady_clock::now();
        seen = credit.released.load(std::memory_order_relaxed);
    });
    while (!parked.load(std::memory_order_acquire)) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // asleep, most likely

    EXPECT_EQ(in->try_send_burst(&d, 1), 1u);
    const auto released_at = std::chrono::steady_clock::now();
    EXPECT_TRUE(collector.poll());
    dispatcher.join();
    EXPECT_EQ(seen, 1u) << "the collector published the next number it waits for";
    EXPECT_EQ(bell.park_timeouts(), 0u);
    EXPECT_LT(std::chrono::duration<double>(woke - released_at).count(), 1.0)
        << "the dispatcher slept on after the release: wake-up lost";
    PacketDesc got;
    while (out->try_recv(got)) free_packet(got.mbuf);
    EXPECT_EQ(pool.available(), pool.capacity());
}

// Channels into one receiver that share one queue (Channel::receive_side), as a collector's
// links on the messaging network do: a receive pops the queue whichever link it goes through.
class SharedQueueView final : public Channel<PacketDesc> {
public:
    SharedQueueView(std::vector<PacketDesc>& queue, int& polls) : q_(queue), polls_(polls) {}
    bool try_send(const PacketDesc& d) override { q_.push_back(d); return true; }
    bool try_recv(PacketDesc& d) override { return try_recv_burst(&d, 1) == 1; }
    uint32_t try_send_burst(const PacketDesc* d, uint32_t n) override {
        q_.insert(q_.end(), d, d + n);
        return n;
    }
    uint32_t try_recv_burst(PacketDesc* d, uint32_t n) override {
        ++polls_;
        const uint32_t k = std::min<uint32_t>(n, static_cast<uint32_t>(q_.size()));
        std::copy(q_.begin(), q_.begin() + k, d);
        q_.erase(q_.begin(), q_.begin() + k);
        return k;
    }
    uint32_t capacity() const override { return 1024; }
    const char* transport() const override { return "shared_view"; }
    const void* receive_side() const override { return &q_; }

private:
    std::vector<PacketDesc>& q_;
    int& polls_;
};

TEST(NodeTaskInputs, LinksSharingOneQueueArePolledOnceNotOncePerSender) {
    // Fig. 12 of the TILEPro64 study: the asymmetric interface's receive cost does not grow
    // with the senders. An idle collector of 8 workers whose links share one queue looks at it
    // once per poll; one with 8 private links looks 8 times.
    std::vector<PacketDesc> queue;
    int polls = 0;
    std::vector<std::unique_ptr<Channel<PacketDesc>>> links;
    NodeTaskSpec spec;
    for (int w = 0; w < 8; ++w) {
        links.push_back(std::make_unique<SharedQueueView>(queue, polls));
        spec.inputs.push_back(links.back().get());
    }
    NodeTask collector(std::move(spec));
    EXPECT_FALSE(collector.poll());
    EXPECT_EQ(polls, 1);

    std::vector<std::vector<PacketDesc>> queues(8);
    int private_polls = 0;
    std::vector<std::unique_ptr<Channel<PacketDesc>>> private_links;
    NodeTaskSpec scan;
    for (auto& q : queues) {
        private_links.push_back(std::make_unique<SharedQueueView>(q, private_polls));
        scan.inputs.push_back(private_links.back().get());
    }
    NodeTask scanning(std::move(scan));
    EXPECT_FALSE(scanning.poll());
    EXPECT_EQ(private_polls, 8);
}

TEST(AppRunnerAccounting, APacketFreedWithoutACountedDropIsUnaccounted) {
    const RunReport r = run_yaml("pipeline:\n  - stage: synth\n    count: 1000\n  - { stage: vanish, every: 10 }\n  - drop\n");
    EXPECT_EQ(r.unaccounted, 100);
    EXPECT_TRUE(r.pools_full());
}

TEST(AppRunnerAccounting, MbufsASinkKeepsLeaveThePoolNotFull) {
    const RunReport r = run_yaml("pipeline:\n  - stage: synth\n    count: 1000\n  - hold\n");
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_FALSE(r.pools_full());
    ASSERT_EQ(r.pools.size(), 1u);
    EXPECT_EQ(r.pools[0].capacity - r.pools[0].available, 1000u);
}

TEST(AppRunner, AFarmOfRoutersSendsEachPortsShareOnItsDeviceAndTheReportCountsItPerPort) {
    // synth's 1024 flows go to 10.128.0.0/22, each flow in turn: 10.128.0-1.x (flows 0-511) is
    // port 0, 10.128.2-3.x port 1, so 40960 packets are 20480 per port. Each worker's port_out
    // sends on TX queue w of both devices.
    char routes[] = "/tmp/tp_runner_routes_XXXXXX";
    const int fd = mkstemp(routes);
    ASSERT_GE(fd, 0);
    const std::string text = "10.128.0.0/23 0\n10.128.2.0/23 1\n";
    ASSERT_EQ(write(fd, text.data(), text.size()), ssize_t(text.size()));
    close(fd);
    const RunReport r = run_yaml(std::string("pipeline:\n  - { stage: synth, count: 40960, flows: 1024 }\n  - parse\n"
                                             "  - farm:\n      workers: 2\n      collect: none\n      worker:\n"
                                             "        - { stage: lpm_route, routes: ") + routes + " }\n"
                                 "        - { stage: port_out, devices: \"net_null_rp0, net_null_rp1\" }\n");
    std::remove(routes);
    uint64_t per_port[2] = {0, 0};
    int sinks = 0;
    for (const auto& s : r.stages) {
        if (s.stage != "port_out") continue;
        ++sinks;
        ASSERT_EQ(s.ports.size(), 2u) << s.name;
        EXPECT_EQ(s.ports[0].to, "net_null_rp0");
        EXPECT_EQ(s.ports[1].to, "net_null_rp1");
        EXPECT_EQ(s.ports[0].packets + s.ports[1].packets, s.out) << s.name;
        for (size_t p = 0; p < 2; ++p) per_port[p] += s.ports[p].packets;
    }
    EXPECT_EQ(sinks, 2);
    EXPECT_EQ(per_port[0], 20480u);
    EXPECT_EQ(per_port[1], 20480u);
    EXPECT_EQ(r.delivered, 40960u);
    expect_accounted(r);
    // The table shows each port under its sink; JSON carries the same.
    EXPECT_NE(format_table(r).find("    port 1 -> net_null_rp1: "), std::string::npos) << format_table(r);
    const nlohmann::json j = to_json(r);
    uint64_t json_port1 = 0;
    for (const auto& s : j["stages"])
        if (s["stage"] == "port_out") json_port1 += s["ports"][1]["packets"].get<uint64_t>();
        else EXPECT_FALSE(s.contains("ports")) << s["stage"];
    EXPECT_EQ(json_port1, 20480u);
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

TEST(AppRunnerWaits, EachTileThreadReportsHowItsIdleWaitsEnded) {
    // Parked at once whenever idle, each tile thread is woken by its producers' rings: the
    // report says how many times, and how many waits ended by the park timeout instead.
    const RunReport r = run_yaml("runtime: { threads: per_tile, idle: park }\npipeline:\n"
                                 "  - { stage: synth, count: 20000 }\n  - pass\n  - drop\n");
    ASSERT_EQ(r.waits.size(), r.threads);
    uint64_t wakeups = 0;
    for (const ThreadWaits& w : r.waits) wakeups += w.wakeups;
    EXPECT_GT(wakeups, 0u) << "downstream tiles park between bursts and are rung awake";
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(j["thread_waits"].size(), r.threads);
    EXPECT_TRUE(j["thread_waits"][0].contains("park_timeouts"));
}

}  // namespace
}  // namespace tp
