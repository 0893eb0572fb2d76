#include "framework/graph/app_plan.hpp"

#include <algorithm>

#include "framework/graph/chaos_plan.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/runtime/cpu_affinity.hpp"

namespace tp {

AppPlan plan_app(const AppConfig& app) {
    check_stage_params(app);
    const std::vector<int> cpus = allowed_cpus();
    AppGraph graph = build_graph(app);
    // More tiles than CPUs: a tile that only moves packets (an emitter, a collector) buys no
    // parallelism, so its neighbours do its work and a hop per packet is saved.
    if (app.fuse == "always" || (app.fuse == "auto" && graph.nodes.size() > cpus.size())) graph = build_graph(app, true);
    const size_t n = graph.nodes.size();
    std::vector<double> load;
    for (const GraphNode& g : graph.nodes) load.push_back(g.load);
    PlacementRequest req;
    req.nodes = n;
    req.policy = placement_policy(app.placement);
    // Each source config gives its packets an input port (PacketDesc::port): run refuses more.
    size_t sources = 0;
    for (const NodeConfig& nc : app.pipeline)
        if (nc.stage != nullptr && nc.stage->kind == StageKind::Source && ++sources > PacketDesc::kPortMax + 1u)
            throw LocatedError(nc.where, "'" + nc.name + "': an app has at most " +
                                             std::to_string(PacketDesc::kPortMax + 1) +
                                             " sources (the descriptor's input port)");
    bool any_fixed = false;
    for (const GraphNode& g : graph.nodes) {
        std::optional<TileXY> fixed;
        for (size_t s : g.stages) {
            const NodeConfig& nc = app.pipeline[s];
            if (!nc.tile) continue;
            if (nc.pattern >= 0)
                throw LocatedError(nc.where, "'" + nc.name + "' runs on every worker of farm '" +
                                                 app.patterns[static_cast<size_t>(nc.pattern)].name +
                                                 "': it cannot be given one tile");
            fixed = nc.tile;
        }
        any_fixed = any_fixed || fixed.has_value();
        req.fixed.push_back(fixed);
    }
    for (const GraphEdge& e : graph.edges) req.edges.push_back(TrafficEdge{e.from, e.to, e.weight});

    // More nodes than host CPUs under `compact`: the runs of nodes that share a CPU are cut by
    // load, and the host offers each CPU as many tiles as the longest run needs.
    std::vector<size_t> runs;
    size_t min_tiles = n;
    if (app.topology == "host" && req.policy == PlacementPolicy::Compact && !any_fixed && n > cpus.size() &&
        !cpus.empty()) {
        runs = balanced_runs(load, cpus.size());
        std::vector<size_t> len(cpus.size(), 0);
        for (size_t r : runs) ++len[r];
        min_tiles = cpus.size() * *std::max_element(len.begin(), len.end());
    }
    Topology topo = [&] {
        try {
            return Topology::preset(app.topology, min_tiles);
        } catch (const std::invalid_argument& e) {
            throw LocatedError(app.topology_where, e.what());
        }
    }();
    std::vector<int> tiles = runs.empty() ? std::vector<int>{} : place_runs_on_host(topo, runs);
    if (tiles.empty()) {
        try {
            tiles = place_nodes(topo, req);
        } catch (const PlacementError& e) {
            const GraphNode& g = graph.nodes[std::min(e.node(), n - 1)];
            throw LocatedError(g.where, "cannot place node '" + g.name + "': " + e.what());
        }
    }
    AppPlan plan{std::move(graph), std::move(topo), std::move(tiles), {}, {}, 0};
    plan.cpus = cpus.size();
    plan.threads = map_tiles_to_cpus(plan.topology, plan.tile_of_node, cpus, app.threads == "per_tile", load);
    for (const GraphEdge& e : plan.graph.edges)
        plan.links.push_back(PlannedLink{e.from, e.to, e.transport, e.capacity,
                                         plan.topology.hops(plan.tile_of_node[e.from], plan.tile_of_node[e.to])});
    plan.networks = plan_networks(app, plan);
    check_pool(app, plan);
    chaos_stall_node(app, plan.graph);  // names a node of this graph
    return plan;
}

}  // namespace tp
