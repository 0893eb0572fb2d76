// Ranks: which rank runs each node, the links between ranks, and each rank's part of the plan.
#include <gtest/gtest.h>

#include <algorithm>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/app_pools.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/graph/rank_plan.hpp"
#include "framework/graph/rank_report.hpp"
#include "framework/ranks/stamp_clock.hpp"

namespace tp {
namespace {

// The LocatedError `f` throws, as the user reads it; "no error" when it throws none.
template <typename F>
std::string thrown_error(F f) {
    try {
        f();
    } catch (const LocatedError& e) {
        return e.what();
    }
    return "no error";
}

const char* kFarm =
    "pipeline:\n"
    "  - synth\n"
    "  - farm:\n"
    "      name: fw\n"
    "      workers: 4\n"
    "      collect: ordered\n"
    "      ranks: [1, 2]\n"
    "      worker: [pass]\n"
    "  - drop\n";

AppConfig never_fused(const std::string& yaml) {
    AppConfig app = parse_app_config(yaml, "a.yaml");
    app.fuse = "never";  // the emitter and collector keep their tiles whatever the host's CPUs
    return app;
}

size_t node_named(const AppGraph& g, const std::string& name) {
    for (size_t n = 0; n < g.nodes.size(); ++n)
        if (g.nodes[n].name == name) return n;
    ADD_FAILURE() << "no node " << name;
    return 0;
}

TEST(RankPlan, AFarmsWorkersGoRoundRobinOverItsRanksAndEachCrossingEdgeIsALink) {
    const AppConfig app = never_fused(kFarm);
    const AppPlan plan = plan_app(app);
    const RankLayout l = plan_ranks(app, plan.graph);
    EXPECT_EQ(l.ranks, 3);
    EXPECT_TRUE(l.named);
    EXPECT_EQ(l.rank_of_node[node_named(plan.graph, "fw.emitter")], 0);
    EXPECT_EQ(l.rank_of_node[node_named(plan.graph, "fw.collector")], 0);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(l.rank_of_node[node_named(plan.graph, "fw." + std::to_string(w))], 1 + w % 2);
    ASSERT_EQ(l.links.size(), 8u);
    EXPECT_EQ(l.links[0].from, "fw.emitter");
    EXPECT_EQ(l.links[0].to, "fw.0");
    EXPECT_EQ(l.links[0].to_rank, 1);
}

// Rank 1 runs workers 0 and 2, each between a receiving and a sending end; rank 0 keeps the
// emitter's outputs in worker order (its dispatch picks them by position).
TEST(RankPlan, EachRanksPartHoldsItsNodesAndTheEndsOfItsLinksInEdgeOrder) {
    const AppConfig app = never_fused(kFarm);
    const AppPlan plan = plan_app(app);
    const RankLayout l = plan_ranks(app, plan.graph);
    const RankPart one = plan_rank_part(app, plan, l, 1);
    const AppGraph& g = one.plan.graph;
    size_t receive = 0, send = 0;
    for (const GraphNode& n : g.nodes) {
        receive += n.role == NodeRole::RankReceive;
        send += n.role == NodeRole::RankSend;
        if (n.role == NodeRole::RankReceive || n.role == NodeRole::RankSend) {
            EXPECT_EQ(n.peer_rank, 0) << n.name;
        }
    }
    EXPECT_EQ(receive, 2u);
    EXPECT_EQ(send, 2u);
    EXPECT_EQ(g.nodes.size(), 6u);
    const size_t w2 = node_named(g, "fw.2");
    ASSERT_EQ(g.inputs_of(w2).size(), 1u);
    EXPECT_EQ(g.nodes[g.edges[g.inputs_of(w2)[0]].from].name, rank_link_name(2, "fw.emitter", "fw.2"));
    EXPECT_EQ(one.plan.tile_of_node.size(), g.nodes.size());

    const RankPart zero = plan_rank_part(app, plan, l, 0);
    const AppGraph& z = zero.plan.graph;
    const std::vector<size_t> out = z.outputs_of(node_named(z, "fw.emitter"));
    ASSERT_EQ(out.size(), 4u);
    for (size_t w = 0; w < 4; ++w) {
        const GraphNode& end = z.nodes[z.edges[out[w]].to];
        EXPECT_EQ(end.role, NodeRole::RankSend);
        EXPECT_EQ(end.rank_link, static_cast<int>(w));
        EXPECT_EQ(end.peer_rank, 1 + static_cast<int>(w % 2));
    }
    EXPECT_EQ(z.inputs_of(node_named(z, "fw.collector")).size(), 4u);
}

// A link to a rank of the same host may lend up to kRankLinkSlots of the sending rank's
// mbufs: its pool holds them beside what it needs in flight, and the receiving rank has
// data-less mbufs to attach them to; unless every link goes by messages (then none is lent).
TEST(RankPlan, LinksTakeLendingMemoryOnBothRanksUnlessTheyGoByMessages) {
    AppConfig app = never_fused(kFarm);
    const RankLayout l = plan_ranks(app, plan_app(app).graph);
    const RankPart lending = plan_rank_part(app, plan_app(app), l, 0);  // the emitter's 4 links out
    app.rank_links = "messages";
    const RankPart messages = plan_rank_part(app, plan_app(app), l, 0);
    EXPECT_EQ(pool_sizing(lending.app, lending.plan).held, pool_sizing(messages.app, messages.plan).held + 4 * kRankLinkSlots);
    // Rank 1 receives on 2 links: a pool of data-less mbufs each to attach lent buffers to.
    app.rank_links = "auto";
    const RankPart receiving = plan_rank_part(app, plan_app(app), l, 1);
    app.rank_links = "messages";
    const RankPart copying = plan_rank_part(app, plan_app(app), l, 1);
    EXPECT_EQ(eal_options_for(receiving.app, receiving.plan).memory_bytes - app_pools_footprint(receiving.app, receiving.plan),
              eal_options_for(copying.app, copying.plan).memory_bytes - app_pools_footprint(copying.app, copying.plan) +
                  2 * MbufPool::footprint(rank_link_header_spec()));
}

// A map shares its tasks in memory: its emitter, workers and collector run on its rank.
TEST(RankPlan, AMapRunsWholeOnItsRank) {
    const AppConfig app = parse_app_config("pipeline:\n  - synth\n  - map:\n      workers: 3\n      rank: 1\n"
                                           "      worker: [parse]\n  - drop\n",
                                           "a.yaml");
    const AppPlan plan = plan_app(app);
    const RankLayout l = plan_ranks(app, plan.graph);
    for (size_t n = 0; n < plan.graph.nodes.size(); ++n)
        EXPECT_EQ(l.rank_of_node[n], plan.graph.nodes[n].pattern >= 0 ? 1 : 0) << plan.graph.nodes[n].name;
    ASSERT_EQ(l.links.size(), 2u);  // synth -> the map's emitter, its collector -> drop
    EXPECT_EQ(l.links[0].to, "map.emitter");
    EXPECT_EQ(l.links[1].from, "map.collector");
}

TEST(RankPlan, TheWorldMustMatchTheRanksTheAppNames) {
    const AppConfig app = never_fused(kFarm);
    const RankLayout l = plan_ranks(app, plan_app(app).graph);
    EXPECT_NO_THROW(check_world(app, l, 3, true));
    EXPECT_EQ(thrown_error([&] { check_world(app, l, 2, true); }),
              "a.yaml:7:14: rank 2 does not exist: mpirun started 2 process(es), ranks 0 to 1 (start it with -np 3)");
    EXPECT_EQ(thrown_error([&] { check_world(app, l, 1, true); }),
              "a.yaml:7:14: rank 2 does not exist: mpirun started 1 process(es), ranks 0 to 0 (start it with -np 3)");
    EXPECT_EQ(thrown_error([&] { check_world(app, l, 1, false); }),
              "a.yaml:7:14: rank 2 needs mpirun: run `mpirun -np 3 tilepipe run ...` (without mpirun an app is one process, rank 0)");
    EXPECT_EQ(thrown_error([&] { check_world(app, l, 4, true); }),
              "a.yaml:7:14: the highest rank the app names is 2, but mpirun started 4 processes: start it with -np 3 "
              "(a rank without nodes is refused)");
    const AppConfig plain = parse_app_config("pipeline: [synth, drop]\n", "p.yaml");
    const RankLayout one = plan_ranks(plain, plan_app(plain).graph);
    EXPECT_FALSE(one.named);
    EXPECT_NO_THROW(check_world(plain, one, 1, false));
    EXPECT_NO_THROW(check_world(plain, one, 1, true));
    EXPECT_NE(thrown_error([&] { check_world(plain, one, 2, true); }).find("p.yaml:1:1: mpirun started 2 processes, but the app names no rank"),
              std::string::npos);
}

TEST(RankPlan, ARankWithoutNodesIsRefusedAtTheHighestRank) {
    const AppConfig app = parse_app_config("pipeline:\n  - synth\n  - stage: drop\n    rank: 2\n", "a.yaml");
    const AppPlan plan = plan_app(app);
    const RankLayout l = plan_ranks(app, plan.graph);
    EXPECT_EQ(thrown_error([&] { check_rank_layout(app, plan.graph, l); }),
              "a.yaml:4:11: rank 1 holds no node: the app names ranks up to 2 here, and every rank from 0 to it needs a node");
}

TEST(RankReport, RankZeroMergesEveryRowOfTheOtherRanksWithTheirNodesRenumbered) {
    // Rank 0: a source on its only tile. Rank 1: a link's receiving end and a sink that writes
    // by port (its file, its ports) and failed; the merged report must keep each of its rows.
    RunReport r0;
    r0.packets = 100;
    r0.tiles.push_back(TileReport{"synth", "", 0, 0, 0, -1, 1.0, 100, 6400, 0});
    r0.stages.push_back(StageReport{.name = "synth", .stage = "synth", .node = 0, .out = 100});
    r0.pools.push_back(PoolReport{"app", 1024, 1024});
    RunReport r1;
    r1.delivered = 90;
    r1.drops = 10;
    r1.tiles.push_back(TileReport{"mpi0:synth->out", "receive", 1, 0, 1, -1, 0.5, 100, 6400, 0});
    r1.tiles.push_back(TileReport{"out", "", 2, 0, 1, -1, 0.2, 100, 6400, 0});
    r1.stages.push_back(StageReport{.name = "out", .stage = "out", .node = 1, .in = 100, .out = 90, .drops = 10,
                                    .drop_reasons = {{"write_failed", 10}}, .output = "out.pcap",
                                    .ports = {PortTx{0, "p0.pcap", 60}, PortTx{1, "p1.pcap", 30}}});
    r1.pools.push_back(PoolReport{"app", 1024, 1000});
    r1.failures.push_back(FailureReport{"out", "disk full", 10});
    const std::vector<nlohmann::json> summaries{rank_summary(r0, 0, "h0"), rank_summary(r1, 1, "h1")};
    RankLayout layout;
    layout.ranks = 2;
    const RanksReport rr = merge_ranks(r0, summaries, layout);
    ASSERT_EQ(r0.tiles.size(), 3u);
    ASSERT_EQ(r0.stages.size(), 2u);
    const StageReport& merged = r0.stages[1];
    EXPECT_EQ(merged.node, 2) << "rank 1's node 1 follows rank 0's one tile";
    EXPECT_EQ(r0.tiles[static_cast<size_t>(merged.node)].node, "out");
    EXPECT_EQ(merged.output, "out.pcap");
    ASSERT_EQ(merged.ports.size(), 2u);
    EXPECT_EQ(merged.ports[1].to, "p1.pcap");
    EXPECT_EQ(merged.ports[1].packets, 30u);
    EXPECT_EQ(merged.drop_reasons.at("write_failed"), 10u);
    EXPECT_EQ(r0.delivered, 90u);
    EXPECT_EQ(r0.unaccounted, 0);
    ASSERT_EQ(r0.failures.size(), 1u);
    EXPECT_EQ(r0.failures[0].error, "rank 1: disk full");
    ASSERT_EQ(r0.pools.size(), 2u);
    EXPECT_EQ(r0.pools[1].name, "rank1/app");
    ASSERT_EQ(rr.ranks.size(), 2u);
    EXPECT_FALSE(rr.ranks[1].pools_full);
    EXPECT_TRUE(rr.ranks[0].pools_full);
}

// A stamp made on one host reaches another as its age: 1 us old at the sender (2 GHz TSC) is
// 1 us old at a receiver whose TSC runs at 3 GHz from another origin, plus the time between
// the two readings on the system clock; a stamp from the receiver's future is taken as now.
TEST(StampClock, AnEntryStampKeepsItsAgeAcrossHostsWithOtherTscs) {
    const StampClock sender(1'000'000'000'000, 5'000'000'000, 2e9);
    const int64_t sent = sender.to_system_ns(1'000'000'000'000 - 2000);
    EXPECT_EQ(sent, 5'000'000'000 - 1000);
    const StampClock receiver(3'000'000'000'000, 5'000'000'500, 3e9);
    EXPECT_EQ(receiver.to_tsc(sent), 3'000'000'000'000 - 4500);  // 1.5 us old, in 3 GHz ticks
    EXPECT_EQ(receiver.to_tsc(5'000'000'900), 3'000'000'000'000u);
    EXPECT_EQ(StampClock(10, 5'000'000'000, 1e9).to_tsc(0), 0u) << "older than the TSC itself: its origin";
}

// A rank's sinks take latency samples of their own; rank 0's report holds every rank's, as if
// one histogram had taken them all.
TEST(RankReport, RankZeroMergesTheLatencySamplesOfEveryRanksSinks) {
    constexpr double kHz = 2e9;  // 2000 ticks a microsecond
    LatencyHistogram h0, h1, all;
    for (LatencyHistogram* h : {&h0, &all}) h->record(2000, 1000);  // 1 us
    for (LatencyHistogram* h : {&h1, &all}) {
        h->record(20000, 1000);  // 10 us
        h->record(200000);       // 100 us
    }
    const auto report = [&](const LatencyHistogram& h, const std::string& node) {
        LatencyReport l;
        l.mode = "all";
        l.tsc_hz = kHz;
        l.end_to_end = LatencySummary::of(h, kHz);
        l.buckets = latency_buckets(h, kHz);
        l.nodes.push_back(NodeResidenceReport{node, LatencySummary::of(h, kHz), LatencySummary::of(h, kHz)});
        return l;
    };
    RunReport r0, r1;
    r0.latency = report(h0, "synth");
    r1.latency = report(h1, "drop");
    const std::vector<nlohmann::json> summaries{rank_summary(r0, 0, "h0"), rank_summary(r1, 1, "h1")};
    RankLayout layout;
    layout.ranks = 2;
    merge_ranks(r0, summaries, layout);
    const LatencySummary want = LatencySummary::of(all, kHz);
    const LatencySummary& got = r0.latency.end_to_end;
    EXPECT_EQ(got.samples, 2001u);
    EXPECT_DOUBLE_EQ(got.p50, want.p50);
    EXPECT_DOUBLE_EQ(got.p90, want.p90);
    EXPECT_DOUBLE_EQ(got.p999, want.p999);
    EXPECT_DOUBLE_EQ(got.max, 100.0);
    EXPECT_NEAR(got.mean, (1000 * 1.0 + 1000 * 10.0 + 100.0) / 2001, 1e-9);
    EXPECT_EQ(r0.latency.buckets.size(), latency_buckets(all, kHz).size());
    ASSERT_EQ(r0.latency.nodes.size(), 2u);
    EXPECT_EQ(r0.latency.nodes[1].node, "drop");
}

}  // namespace
}  // namespace tp
