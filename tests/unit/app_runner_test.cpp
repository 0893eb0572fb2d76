// The runtime: every packet a source emits leaves through a sink or a counted drop, end of
// stream reaches every node, and every mempool is full again at the end — whatever the
// placement (cooperative tiles, a thread per node with more threads than CPUs, tiny queues),
// a stop, a second signal or a chaos stall; pools sized from the graph. What a run reports is
// in app_report_test, what it does when a stage fails in app_failure_test.
#include <gtest/gtest.h>

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

#include "tests/support/app_run.hpp"

namespace tp {
namespace {

using test::expect_accounted;
using test::run_yaml;

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
