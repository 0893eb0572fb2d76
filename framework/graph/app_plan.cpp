#include "framework/graph/app_plan.hpp"

#include "framework/runtime/cpu_affinity.hpp"

namespace tp {

AppPlan plan_app(const AppConfig& app) {
    AppGraph graph = build_graph(app);
    const size_t n = graph.nodes.size();
    Topology topo = [&] {
        try {
            return Topology::preset(app.topology, n);
        } catch (const std::invalid_argument& e) {
            throw LocatedError(app.topology_where, e.what());
        }
    }();
    PlacementRequest req;
    req.nodes = n;
    req.policy = placement_policy(app.placement);
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
        req.fixed.push_back(fixed);
    }
    for (const GraphEdge& e : graph.edges) req.edges.push_back(TrafficEdge{e.from, e.to, e.weight});
    std::vector<int> tiles;
    try {
        tiles = place_nodes(topo, req);
    } catch (const PlacementError& e) {
        const GraphNode& g = graph.nodes[std::min(e.node(), n - 1)];
        throw LocatedError(g.where, "cannot place node '" + g.name + "': " + e.what());
    }
    AppPlan plan{std::move(graph), std::move(topo), std::move(tiles), {}, {}, 0};
    const std::vector<int> cpus = allowed_cpus();
    plan.cpus = cpus.size();
    plan.threads = map_tiles_to_cpus(plan.topology, plan.tile_of_node, cpus, app.threads == "per_tile");
    for (const GraphEdge& e : plan.graph.edges)
        plan.links.push_back(PlannedLink{e.from, e.to, e.transport, e.capacity,
                                         plan.topology.hops(plan.tile_of_node[e.from], plan.tile_of_node[e.to])});
    return plan;
}

}  // namespace tp
