// MemoryPlan: the `memory:` setting (framework/config/memory_settings.hpp) resolved to NUMA
// nodes for one planned app — what AppRunner binds and `tilepipe topo` shows.
//
// A graph node runs on its thread's CPU, whose NUMA node is the node's (on a mesh preset too:
// the mesh is modelled, the CPUs are real). Per graph node, the place of its input channels'
// buffers (it is their consumer) and of its stages' state:
//   local        its own NUMA node
//   interleave   every NUMA node the app's CPUs are on, page by page
//   first_touch  nothing bound: the kernel's default
// Packet pools: one per distinct place of the app's sources (the nodes filling mbufs), as a
// DPDK app keeps one pool per socket: a source's pool has its own node's place (local: its
// NUMA node). When every source is alike, as by default, the app has one pool. Every other
// stage node (a processor copying packets allocates too) uses the pool of its own place when
// there is one, else the first; a node on another pool than the first sends descriptors on
// without their length (PacketDesc: between nodes "simple" means of the first pool).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <rte_mempool.h>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/runtime/memory_binding.hpp"

namespace tp {

struct MemoryPlan {
    bool bind = false;               // some setting is not first_touch: everything is bound
    std::vector<int> app_nodes;      // NUMA nodes the app's CPUs are on, ascending
    std::vector<int> numa_of_node;   // per graph node: the NUMA node of its CPU
    std::vector<MemoryPlace> node;   // per graph node: its input channels and stage state
    std::vector<size_t> sources;     // the graph nodes that fill mbufs (sources), ascending
    std::vector<MemoryPlace> pools;  // the app's packet pools, in the order of their first source
    std::vector<int> pool_follows;   // per pool: its first source (graph node); -1 when the app has none
    std::vector<size_t> pool_of_node;  // per graph node: the pool it allocates from
};

MemoryPlan plan_memory(const AppConfig& app, const AppPlan& plan);

// An area the runner bound, for `--log-level debug` and tests: what it holds, the place it
// asked for and the kernel's refusal (empty when bound).
struct BoundArea {
    std::string what;  // "pool tp_pkts_0", "channel src -> parse"
    const void* addr = nullptr;
    size_t bytes = 0;
    MemoryPlace place;
    std::string error;
    bool warned = false;  // its maker warned of the error itself (the runner's one warning is for the rest)
};

// Binds every memory chunk of `mp` (its mbufs) to `place`, moving pages already touched.
std::vector<BoundArea> bind_mempool(rte_mempool* mp, const MemoryPlace& place);

// The DPDK socket for what a node at `place` allocates from DPDK's heaps (tables, rings): its
// NUMA node when local and EAL holds memory there, else -1 (any; mbind places it, or not).
int eal_socket_of(const MemoryPlace& place);

// The setting of graph node `n`: its first stage's, or for an emitter or collector tile its
// farm's or map's, else the app's.
MemoryPolicy memory_policy_of(const AppConfig& app, const AppGraph& graph, size_t n);

}  // namespace tp
