#include "framework/graph/app_plan.hpp"

#include "framework/runtime/cpu_affinity.hpp"

namespace tp {

AppPlan plan_app(const AppConfig& app) {
    Topology topo = [&] {
        try {
            return Topology::preset(app.topology, app.pipeline.size());
        } catch (const std::invalid_argument& e) {
            throw LocatedError(app.topology_where, e.what());
        }
    }();
    PlacementRequest req;
    req.nodes = app.pipeline.size();
    req.policy = placement_policy(app.placement);
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        req.fixed.push_back(app.pipeline[i].tile);
        if (i > 0) req.edges.push_back(TrafficEdge{i - 1, i, 1.0});
    }
    std::vector<int> tiles;
    try {
        tiles = place_nodes(topo, req);
    } catch (const PlacementError& e) {
        const size_t i = std::min(e.node(), app.pipeline.size() - 1);
        throw LocatedError(app.pipeline[i].where, "cannot place node '" + app.pipeline[i].name + "': " + e.what());
    }
    AppPlan plan{std::move(topo), std::move(tiles), {}, {}, 0};
    const std::vector<int> cpus = allowed_cpus();
    plan.cpus = cpus.size();
    plan.threads = map_tiles_to_cpus(plan.topology, plan.tile_of_node, cpus, app.threads == "per_tile");
    for (size_t i = 1; i < app.pipeline.size(); ++i) {
        const NodeConfig& n = app.pipeline[i];
        plan.links.push_back(PlannedLink{i - 1, i, n.transport.empty() ? app.transport : n.transport,
                                         n.queue != 0 ? n.queue : app.queue,
                                         plan.topology.hops(plan.tile_of_node[i - 1], plan.tile_of_node[i])});
    }
    return plan;
}

}  // namespace tp
