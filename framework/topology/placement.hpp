// Placement: which tile each node of an app runs on, and which CPU thread each tile runs on.
//
// Policies: `linear` (usable tiles in row-major order), `snake` (rows alternate direction, so
// consecutive nodes are always 1 hop apart on a mesh), `compact` (greedy: each node goes to
// the free tile with the least traffic-weighted hops to the nodes already placed; the result
// is never costlier than linear or snake, which it also tries), and explicit `tile: [x, y]`
// per node, honoured under every policy. Reserved tiles are never used.
//
// Tiles onto CPUs: one thread per tile while there are CPUs enough; beyond that consecutive
// tiles (in node order) share a thread pinned to one CPU and are polled cooperatively. The
// runs of nodes that share a CPU are cut by estimated load, not by count: a source, its parser
// and a farm's emitter each see every packet while each of W workers sees 1/W of them, so
// sharing by count would stack the heavy head of an app on one CPU and leave the other idle.
// (On `host` the tiles carry their CPU: plan_app cuts by load only under `compact` with no
// tile pinned, via balanced_runs + place_runs_on_host; otherwise the tile order decides.)
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/topology/topology.hpp"

namespace tp {

enum class PlacementPolicy { Linear, Snake, Compact };
PlacementPolicy placement_policy(const std::string& name);  // throws std::invalid_argument
const std::vector<std::string>& placement_names();

struct TrafficEdge {
    size_t from = 0, to = 0;
    double weight = 1.0;  // relative packets carried
};

struct PlacementRequest {
    size_t nodes = 0;
    std::vector<TrafficEdge> edges;
    std::vector<std::optional<TileXY>> fixed;  // per node; empty = none fixed
    PlacementPolicy policy = PlacementPolicy::Snake;
};

// A placement problem the user must fix; `node` is the offending node's index.
class PlacementError : public std::runtime_error {
public:
    PlacementError(size_t node, const std::string& msg) : std::runtime_error(msg), node_(node) {}
    size_t node() const { return node_; }

private:
    size_t node_;
};

// Tile id per node.
std::vector<int> place_nodes(const Topology& topo, const PlacementRequest& req);

// Sum over edges of weight x hops.
double placement_cost(const Topology& topo, const std::vector<TrafficEdge>& edges,
                      const std::vector<int>& tiles);

struct ThreadMap {
    std::vector<size_t> thread_of_node;  // per node
    std::vector<int> cpu_of_thread;      // per thread
};

// Maps the tiles in use onto `cpus`: 1:1 while they last (on `host`, a tile's own CPU),
// otherwise contiguous groups of nodes per CPU, balanced by `load` (per node; empty = equal).
// `per_tile` forces one thread per tile.
ThreadMap map_tiles_to_cpus(const Topology& topo, const std::vector<int>& tile_of_node,
                            const std::vector<int>& cpus, bool per_tile,
                            const std::vector<double>& load = {});

// Cuts nodes 0..n-1 (n = load.size()) into `groups` contiguous non-empty runs so that the
// heaviest run is as light as possible; returns each node's run. Needs groups <= n.
std::vector<size_t> balanced_runs(const std::vector<double>& load, size_t groups);

// On the `host` topology: puts run g of `run_of_node` on the tiles of the g-th CPU in tile
// order, so that each run shares one CPU. Empty when the host has fewer CPUs than runs or
// a CPU too few tiles (build it with Topology::preset("host", runs x longest run)).
std::vector<int> place_runs_on_host(const Topology& topo, const std::vector<size_t>& run_of_node);

}  // namespace tp
