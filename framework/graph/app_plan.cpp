#include "framework/graph/app_plan.hpp"

#include <algorithm>

#include "framework/graph/chaos_plan.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/runtime/cpu_affinity.hpp"

namespace tp {

namespace {

// The tile graph node `g` was given, and where: a plain node's `tile`, or a farm or map
// worker's own (`--set FARM.W/NODE.tile`) on the first stage it runs. A tile given to every
// worker at once, or to a later stage of a worker chain (one node), is refused there.
std::optional<std::pair<TileXY, Location>> fixed_tile(const AppConfig& app, const GraphNode& g) {
    std::optional<std::pair<TileXY, Location>> fixed;
    for (size_t k = 0; k < g.stages.size(); ++k) {
        const NodeConfig& nc = app.pipeline[g.stages[k]];
        if (nc.pattern < 0) {
            if (nc.tile) fixed = std::pair{*nc.tile, nc.tile_where};
            continue;
        }
        const PatternConfig& f = app.patterns[static_cast<size_t>(nc.pattern)];
        const std::string kind = f.map ? "map '" : "farm '";
        if (nc.tile)
            throw LocatedError(nc.tile_where, "'" + nc.name + "' runs on every worker of " + kind + f.name +
                                                  "': one tile cannot hold them all; give each worker its own: --set " +
                                                  f.name + ".0/" + nc.name + ".tile=[x, y]");
        const auto it = nc.worker_tile.find(g.worker);
        if (it == nc.worker_tile.end()) continue;
        if (k > 0)
            throw LocatedError(it->second.second, "'" + nc.name + "' is not the first stage of worker " + g.name +
                                                      "'s chain, which runs as one node on one tile: use --set " + g.name +
                                                      "/" + app.pipeline[g.stages[0]].name + ".tile=[x, y]");
        fixed = it->second;
    }
    return fixed;
}

}  // namespace

AppPlan plan_app(const AppConfig& app, bool check_params) {
    if (check_params) check_stage_params(app);
    const std::vector<int> cpus = allowed_cpus();
    AppGraph graph = build_graph(app);
    // More tiles than CPUs: a tile that only moves packets (an emitter, a collector) buys no
    // parallelism, so its neighbours do its work and a hop per packet is saved.
    if (app.fuse == "always" || (app.fuse == "auto" && graph.nodes.size() > cpus.size())) graph = build_graph(app, true);
    return place_app_graph(app, std::move(graph));
}

AppPlan place_app_graph(const AppConfig& app, AppGraph graph) {
    const std::vector<int> cpus = allowed_cpus();
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
    std::vector<Location> fixed_where;  // where each node's tile was given, for its errors
    for (const GraphNode& g : graph.nodes) {
        const std::optional<std::pair<TileXY, Location>> fixed = fixed_tile(app, g);
        any_fixed = any_fixed || fixed.has_value();
        req.fixed.push_back(fixed ? std::optional<TileXY>(fixed->first) : std::nullopt);
        fixed_where.push_back(fixed ? fixed->second : g.where);
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
            const size_t i = std::min(e.node(), n - 1);
            throw LocatedError(fixed_where[i], "cannot place node '" + graph.nodes[i].name + "': " + e.what());
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
