// AppPlan: where an app will run, decided before anything starts — its graph (farms
// expanded), its topology, the tile of each graph node, the links between nodes with their
// hop counts, and the thread (and CPU) of each tile. `tilepipe topo` prints it; AppRunner executes it. Placement problems (a reserved or
// taken tile, more nodes than usable tiles) are config errors located at the node.
#pragma once

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/graph/network_plan.hpp"
#include "framework/topology/placement.hpp"
#include "framework/topology/topology.hpp"

namespace tp {

struct PlannedLink {
    size_t from = 0, to = 0;  // graph node indices
    std::string transport;
    uint32_t capacity = 0;
    int hops = 0;
};

struct AppPlan {
    AppGraph graph;
    Topology topology;
    std::vector<int> tile_of_node;  // per graph node
    std::vector<PlannedLink> links;
    ThreadMap threads;
    size_t cpus = 0;  // CPUs available to the app
    std::vector<NetworkPlan> networks;  // the messaging networks its udn links share

    bool oversubscribed() const { return threads.cpu_of_thread.size() > cpus; }
};

// Throws LocatedError (unknown topology at its key, placement errors at the node).
// `check_params` false: the stages' parameter checks are the caller's (a rank checks its own).
AppPlan plan_app(const AppConfig& app, bool check_params = true);
// The placement half of plan_app for a graph already built (a rank's part of the app:
// rank_plan.hpp).
AppPlan place_app_graph(const AppConfig& app, AppGraph graph);

}  // namespace tp
