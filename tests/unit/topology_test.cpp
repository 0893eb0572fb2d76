// Topologies and placement: hop distances, presets, and the properties a user relies on —
// reserved tiles stay unused, explicit tiles are honoured, compact never costs more than
// linear, and tiles map onto CPUs 1:1 while CPUs last.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <set>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/topology/detail/greedy_placement.hpp"
#include "framework/topology/placement.hpp"
#include "framework/topology/topology.hpp"

namespace tp {
namespace {

PlacementRequest chain(size_t n, PlacementPolicy p) {
    PlacementRequest r;
    r.nodes = n;
    r.policy = p;
    for (size_t i = 1; i < n; ++i) r.edges.push_back({i - 1, i, 1.0});
    return r;
}

TEST(Topology, MeshHopsFollowXYRouting) {
    const Topology t = Topology::preset("epiphany16");
    EXPECT_EQ(t.width(), 4);
    EXPECT_EQ(t.height(), 4);
    EXPECT_EQ(t.usable(), 16);
    EXPECT_EQ(t.hops(t.tile_at({0, 0}), t.tile_at({3, 3})), 6);
    EXPECT_EQ(t.hops(t.tile_at({1, 2}), t.tile_at({1, 2})), 0);
    EXPECT_EQ(t.hops(t.tile_at({3, 0}), t.tile_at({0, 1})), 4);
    EXPECT_EQ(t.xy(t.tile_at({2, 3})), (TileXY{2, 3}));
}

TEST(Topology, TilePro64ReservesAFewOsTilesAndKeepsTheCornersForTheLongestPath) {
    const Topology t = Topology::preset("tilepro64");
    EXPECT_EQ(t.tiles(), 64);
    EXPECT_EQ(t.usable(), 58);  // 56 workers, an emitter and a collector
    for (int x = 1; x < 7; ++x) EXPECT_TRUE(t.reserved(t.tile_at({x, 7})));
    for (const TileXY corner : {TileXY{0, 0}, TileXY{7, 7}, TileXY{0, 7}, TileXY{7, 0}})
        EXPECT_FALSE(t.reserved(t.tile_at(corner)));
    EXPECT_EQ(t.hops(t.tile_at({0, 0}), t.tile_at({7, 7})), 14);
    EXPECT_EQ(Topology::preset("epiphany64").usable(), 64);
}

TEST(Topology, UnknownPresetIsRejected) {
    EXPECT_THROW(Topology::preset("cray1"), std::invalid_argument);
}

TEST(Topology, HostHasATileForEveryAllowedCpuAndGrowsForBigApps) {
    const size_t cpus = allowed_cpus().size();
    const Topology t = Topology::preset("host");
    EXPECT_EQ(static_cast<size_t>(t.usable()), cpus);
    std::set<int> seen;
    for (int id = 0; id < t.tiles(); ++id)
        if (!t.reserved(id)) seen.insert(t.cpu_of(id));
    EXPECT_EQ(seen.size(), cpus);
    const Topology big = Topology::preset("host", 64);
    EXPECT_GE(big.usable(), 64);
    // Tiles of one CPU are 0 hops apart; different CPUs are at least 1.
    for (int a = 0; a < big.tiles(); ++a)
        for (int b = 0; b < big.tiles(); ++b)
            if (!big.reserved(a) && !big.reserved(b)) {
                EXPECT_EQ(big.hops(a, b) == 0, big.cpu_of(a) == big.cpu_of(b));
            }
}

TEST(Placement, LinearIsRowMajorAndSnakeKeepsChainsOneHopApart) {
    const Topology t = Topology::preset("epiphany16");
    const auto lin = place_nodes(t, chain(8, PlacementPolicy::Linear));
    EXPECT_EQ(lin, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    const auto snake = place_nodes(t, chain(16, PlacementPolicy::Snake));
    for (size_t i = 1; i < snake.size(); ++i) EXPECT_EQ(t.hops(snake[i - 1], snake[i]), 1) << i;
    EXPECT_LT(placement_cost(t, chain(8, PlacementPolicy::Snake).edges, place_nodes(t, chain(8, PlacementPolicy::Snake))),
              placement_cost(t, chain(8, PlacementPolicy::Linear).edges, lin));
}

TEST(Placement, ReservedTilesAreNeverUsedAndEachNodeGetsItsOwnTile) {
    const Topology t = Topology::preset("tilepro64");
    for (auto p : {PlacementPolicy::Linear, PlacementPolicy::Snake, PlacementPolicy::Compact}) {
        const auto tiles = place_nodes(t, chain(56, p));
        std::set<int> distinct(tiles.begin(), tiles.end());
        EXPECT_EQ(distinct.size(), 56u);
        for (int id : tiles) EXPECT_FALSE(t.reserved(id));
    }
}

// The least cost any placement of `r` can have on `t`, by trying every assignment of nodes to
// distinct usable tiles (small meshes only).
double brute_force_optimum(const Topology& t, const PlacementRequest& r) {
    std::vector<int> usable;
    for (int tile = 0; tile < t.tiles(); ++tile)
        if (!t.reserved(tile)) usable.push_back(tile);
    std::vector<int> tiles(r.nodes, -1);
    std::vector<bool> taken(usable.size(), false);
    double best = std::numeric_limits<double>::infinity();
    const auto place = [&](auto& self, size_t node) -> void {
        if (node == r.nodes) {
            best = std::min(best, placement_cost(t, r.edges, tiles));
            return;
        }
        for (size_t k = 0; k < usable.size(); ++k) {
            if (taken[k]) continue;
            taken[k] = true;
            tiles[node] = usable[k];
            self(self, node + 1);
            taken[k] = false;
        }
    };
    place(place, 0);
    return best;
}

// source -> emitter -> W workers -> collector -> sink, every packet once through a worker.
PlacementRequest farm(size_t workers) {
    PlacementRequest r;
    r.nodes = workers + 4;
    r.policy = PlacementPolicy::Compact;
    const size_t emitter = 1, collector = workers + 2;
    r.edges.push_back({0, emitter, 1.0});
    for (size_t w = 0; w < workers; ++w) {
        r.edges.push_back({emitter, 2 + w, 1.0 / double(workers)});
        r.edges.push_back({2 + w, collector, 1.0 / double(workers)});
    }
    r.edges.push_back({collector, collector + 1, 1.0});
    return r;
}

TEST(Placement, GreedyPassAloneIsOptimalForChainsAndNearTheOptimumOnSmallMeshes) {
    for (const auto& [w, h] : std::vector<std::pair<int, int>>{{2, 2}, {3, 2}, {3, 3}}) {
        const Topology t = Topology::mesh("m", w, h);
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
        // A chain fills the mesh one hop per edge, which no placement beats.
        for (size_t n = 2; n <= size_t(w * h); ++n) {
            const PlacementRequest c = chain(n, PlacementPolicy::Compact);
            EXPECT_EQ(placement_cost(t, c.edges, detail::greedy_placement(t, c)), double(n - 1)) << n << " nodes";
        }
        // Farms: within 10% of the optimum (optimal up to two workers on these meshes).
        for (size_t workers = 1; workers <= 3 && workers + 4 <= size_t(w * h); ++workers) {
            const PlacementRequest f = farm(workers);
            const double greedy = placement_cost(t, f.edges, detail::greedy_placement(t, f));
            EXPECT_LE(greedy, 1.1 * brute_force_optimum(t, f)) << workers << " workers";
        }
        // Random weighted graphs (cycles, fan-in, fan-out): each at most twice the optimum, and
        // at most a third above it summed over all of them.
        std::mt19937 rng(11);
        double greedy_sum = 0, optimum_sum = 0;
        for (int trial = 0; trial < 12; ++trial) {
            PlacementRequest r;
            r.nodes = 3 + rng() % (std::min(w * h, 7) - 2);
            r.policy = PlacementPolicy::Compact;
            for (size_t e = 0; e < r.nodes + 2; ++e) {
                const size_t a = rng() % r.nodes, b = rng() % r.nodes;
                if (a != b) r.edges.push_back({a, b, double(1 + rng() % 8)});
            }
            const double greedy = placement_cost(t, r.edges, detail::greedy_placement(t, r));
            const double optimum = brute_force_optimum(t, r);
            EXPECT_GE(greedy, optimum) << "trial " << trial << ": the cost model is shared, nothing beats the optimum";
            EXPECT_LE(greedy, 2 * optimum) << "trial " << trial;
            greedy_sum += greedy;
            optimum_sum += optimum;
        }
        EXPECT_LE(greedy_sum, optimum_sum * 4 / 3);
    }
}

TEST(Placement, CompactKeepsTheGreedyPlacementWhenItBeatsLinearAndSnake) {
    // Two workers on a 4x4 mesh: the greedy pass puts both next to the emitter and collector,
    // where filling tiles in row order cannot.
    const Topology t = Topology::mesh("m", 4, 4);
    const PlacementRequest f = farm(2);
    const std::vector<int> greedy = detail::greedy_placement(t, f);
    const double greedy_cost = placement_cost(t, f.edges, greedy);
    for (auto p : {PlacementPolicy::Linear, PlacementPolicy::Snake}) {
        PlacementRequest simple = f;
        simple.policy = p;
        EXPECT_LT(greedy_cost, placement_cost(t, f.edges, place_nodes(t, simple)));
    }
    EXPECT_EQ(place_nodes(t, f), greedy);
    EXPECT_EQ(greedy_cost, brute_force_optimum(t, f));
}

TEST(Placement, ExplicitTilesAreHonouredAndCheckedByNode) {
    const Topology t = Topology::preset("tilepro64");
    PlacementRequest r = chain(3, PlacementPolicy::Compact);
    r.fixed = {std::nullopt, TileXY{5, 5}, std::nullopt};
    const auto tiles = place_nodes(t, r);
    EXPECT_EQ(tiles[1], t.tile_at({5, 5}));
    auto error_node = [&](std::vector<std::optional<TileXY>> fixed) -> long {
        PlacementRequest q = chain(3, PlacementPolicy::Linear);
        q.fixed = std::move(fixed);
        try {
            place_nodes(t, q);
        } catch (const PlacementError& e) {
            return static_cast<long>(e.node());
        }
        return -1;
    };
    EXPECT_EQ(error_node({std::nullopt, std::nullopt, TileXY{3, 7}}), 2);   // reserved
    EXPECT_EQ(error_node({TileXY{1, 1}, TileXY{1, 1}, std::nullopt}), 1);   // taken
    EXPECT_EQ(error_node({std::nullopt, TileXY{8, 0}, std::nullopt}), 1);   // outside
    EXPECT_THROW(place_nodes(t, chain(59, PlacementPolicy::Linear)), PlacementError);  // 58 usable
}

TEST(Placement, TilesMapOneToOneOntoCpusWhileTheyLastThenShareThreads) {
    const Topology t = Topology::preset("epiphany16");
    const auto tiles = place_nodes(t, chain(6, PlacementPolicy::Snake));
    const ThreadMap wide = map_tiles_to_cpus(t, tiles, {0, 1, 2, 3, 4, 5, 6, 7}, false);
    EXPECT_EQ(wide.cpu_of_thread.size(), 6u);
    const ThreadMap narrow = map_tiles_to_cpus(t, tiles, {0, 1}, false);
    EXPECT_EQ(narrow.cpu_of_thread, (std::vector<int>{0, 1}));
    EXPECT_EQ(narrow.thread_of_node, (std::vector<size_t>{0, 0, 0, 1, 1, 1}));
    const ThreadMap forced = map_tiles_to_cpus(t, tiles, {0, 1}, true);
    EXPECT_EQ(forced.cpu_of_thread.size(), 6u);
}

TEST(Placement, RunsSharingACpuAreCutByLoadNotByCount) {
    // A source, its parser and a flow-hash emitter each see every packet; four workers share
    // them; then a collector and a sink. By count the head and two workers would share a CPU.
    const std::vector<double> load{2.7, 1.7, 1.2, 0.2, 0.2, 0.2, 0.2, 0.8, 0.7};
    EXPECT_EQ(balanced_runs(load, 2), (std::vector<size_t>{0, 0, 1, 1, 1, 1, 1, 1, 1}));
    // A heavy sink gets a CPU to itself.
    EXPECT_EQ(balanced_runs({1, 1, 1, 1, 9}, 2), (std::vector<size_t>{0, 0, 0, 0, 1}));
    // Equal loads split by count, as evenly as the count allows.
    const auto sizes = [](const std::vector<size_t>& run) {
        std::vector<size_t> n(run.back() + 1, 0);
        for (size_t r : run) ++n[r];
        std::sort(n.begin(), n.end());
        return n;
    };
    EXPECT_EQ(sizes(balanced_runs(std::vector<double>(7, 1.0), 2)), (std::vector<size_t>{3, 4}));
    EXPECT_EQ(balanced_runs(std::vector<double>(6, 1.0), 3), (std::vector<size_t>{0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(sizes(balanced_runs(std::vector<double>(7, 1.0), 3)), (std::vector<size_t>{2, 2, 3}));
    EXPECT_EQ(sizes(balanced_runs(std::vector<double>(10, 1.0), 4)), (std::vector<size_t>{2, 2, 3, 3}));
    // Weightless nodes (pass) still spread by count behind the heavy ones.
    EXPECT_EQ(sizes(balanced_runs({3, 0, 0, 0, 0, 0, 3}, 2)), (std::vector<size_t>{3, 4}));
    // Huge apps take the linear cut: every run non-empty, in order, loads near the shares.
    const std::vector<size_t> big = balanced_runs(std::vector<double>(3000, 1.0), 8);
    EXPECT_EQ(sizes(big).front(), 375u);
    EXPECT_TRUE(std::is_sorted(big.begin(), big.end()));
    EXPECT_EQ(big.back(), 7u);
    // As many runs as nodes: one each; runs are never empty.
    EXPECT_EQ(balanced_runs({5, 0, 0}, 3), (std::vector<size_t>{0, 1, 2}));
    EXPECT_THROW(balanced_runs({1, 1}, 3), std::invalid_argument);

    const Topology t = Topology::preset("tilepro64");
    const auto tiles = place_nodes(t, chain(load.size(), PlacementPolicy::Snake));
    const ThreadMap m = map_tiles_to_cpus(t, tiles, {4, 7}, false, load);
    EXPECT_EQ(m.cpu_of_thread, (std::vector<int>{4, 7}));
    EXPECT_EQ(m.thread_of_node, (std::vector<size_t>{0, 0, 1, 1, 1, 1, 1, 1, 1}));
}

TEST(Placement, HostRunsLandOnTheirOwnCpu) {
    const std::vector<int> cpus = allowed_cpus();
    if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
    const std::vector<size_t> runs{0, 0, 1, 1, 1, 1, 1};
    const Topology host = Topology::preset("host", 5 * cpus.size());
    const std::vector<int> tiles = place_runs_on_host(host, runs);
    ASSERT_EQ(tiles.size(), runs.size());
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = 0; j < runs.size(); ++j) {
            EXPECT_EQ(host.cpu_of(tiles[i]) == host.cpu_of(tiles[j]), runs[i] == runs[j]) << i << " " << j;
            if (i != j) EXPECT_NE(tiles[i], tiles[j]);
        }
    // Too few tiles for the longest run: the caller falls back to plain placement.
    EXPECT_TRUE(place_runs_on_host(Topology::preset("host", 4 * cpus.size()), runs).empty());
}

TEST(Placement, NodeLoadsFollowTheShareOfPacketsEachNodeSees) {
    const AppGraph g = build_graph(parse_app_config(R"(
pipeline:
  - synth
  - parse
  - farm:
      workers: 4
      dispatch: flow_hash
      worker: [parse]
  - { stage: sample, every: 10 }
  - parse
  - drop
)", "loads.yaml"));
    auto load = [&](const std::string& name) {
        for (const GraphNode& n : g.nodes)
            if (n.name == name) return n.load;
        ADD_FAILURE() << "no node " << name;
        return 0.0;
    };
    EXPECT_GT(load("synth"), load("parse"));                    // a source allocates and writes
    EXPECT_GT(load("parse"), load("farm.emitter"));
    EXPECT_NEAR(load("farm.1"), load("farm.0"), 1e-9);
    EXPECT_LT(load("farm.0"), load("parse"));                   // a quarter of the packets
    EXPECT_NEAR(load("parse_3"), load("parse") / 10, 1e-9);     // after a 1-in-10 sample
    EXPECT_LT(load("drop"), load("parse_3") * 2);
}

TEST(Placement, FusionFoldsEmittersAndCollectorsIntoTheirNeighbours) {
    const AppConfig app = parse_app_config(R"(
pipeline:
  - synth
  - parse
  - farm:
      name: a
      workers: 2
      dispatch: flow_hash
      collect: ordered
      worker: [pass]
  - farm:
      name: b
      workers: 2
      worker: [pass]
  - map:
      name: m
      workers: 2
      worker: [pass]
  - drop
)", "fuse.yaml");
    auto names = [](const AppGraph& g) {
        std::vector<std::string> v;
        for (const GraphNode& n : g.nodes) v.push_back(n.name);
        return v;
    };
    auto node = [](const AppGraph& g, const std::string& name) -> const GraphNode& {
        for (const GraphNode& n : g.nodes)
            if (n.name == name) return n;
        throw std::runtime_error("no node " + name);
    };
    const AppGraph apart = build_graph(app, false);
    EXPECT_EQ(names(apart), (std::vector<std::string>{"synth", "parse", "a.emitter", "a.0", "a.1", "a.collector", "b.emitter",
                                                      "b.0", "b.1", "b.collector", "m.emitter", "m.0", "m.1", "m.collector",
                                                      "drop"}));
    const AppGraph fused = build_graph(app, true);
    // parse dispatches and numbers for a; a's collector (a farm follows) dispatches for b; b's
    // collector stays (a map follows, and the map keeps its own emitter and collector).
    EXPECT_EQ(names(fused), (std::vector<std::string>{"synth", "parse", "a.0", "a.1", "a.collector", "b.0", "b.1",
                                                      "b.collector", "m.emitter", "m.0", "m.1", "m.collector", "drop"}));
    EXPECT_EQ(node(fused, "parse").dispatch, Dispatch::FlowHash);
    EXPECT_TRUE(node(fused, "parse").stamp_sequence);
    EXPECT_TRUE(node(fused, "a.collector").reorder);
    EXPECT_EQ(node(fused, "a.collector").dispatch, Dispatch::RoundRobin);
    EXPECT_EQ(fused.outputs_of(1).size(), 2u);  // parse -> a.0, a.1
    // The collector of a farm followed by a stage node folds into it, order window included.
    const AppConfig tail = parse_app_config(
        "pipeline:\n  - synth\n  - farm:\n      workers: 3\n      collect: ordered\n      transport: sm\n"
        "      queue: 64\n      worker: [pass]\n  - drop\n", "t.yaml");
    const AppGraph t = build_graph(tail, true);
    EXPECT_EQ(names(t), (std::vector<std::string>{"synth", "farm.0", "farm.1", "farm.2", "drop"}));
    EXPECT_TRUE(node(t, "drop").reorder);
    ASSERT_EQ(t.inputs_of(4).size(), 3u);
    for (size_t e : t.inputs_of(4)) {  // the farm's links, folded or not
        EXPECT_EQ(t.edges[e].transport, "sm");
        EXPECT_EQ(t.edges[e].capacity, 64u);
    }
}

}  // namespace
}  // namespace tp
