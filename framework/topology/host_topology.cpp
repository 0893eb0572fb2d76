// The `host` topology from hwloc: the CPUs this process may use, grouped by NUMA node (one row
// each) and ordered by core, so SMT siblings and cache sharers sit side by side. Each CPU
// offers `per_cpu` adjacent tiles (1 when the app fits, more when it has more nodes than CPUs).
//
// Distance between two tiles, from the hierarchy their CPUs share:
//   0 the same CPU, 1 SMT siblings (same core), 2 same last-level cache, 3 same NUMA node,
//   4 different NUMA nodes.
#include <hwloc.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <stdexcept>

#include "framework/runtime/cpu_affinity.hpp"
#include "framework/topology/topology.hpp"

namespace tp {

namespace {
struct CpuPlace {
    int cpu = 0;
    int core = -1;   // logical index of the core, -1 unknown
    int cache = -1;  // logical index of the last-level cache
    int numa = 0;
};

int ancestor_index(hwloc_topology_t topo, hwloc_obj_t pu, hwloc_obj_type_t type) {
    hwloc_obj_t o = hwloc_get_ancestor_obj_by_type(topo, type, pu);
    return o == nullptr ? -1 : static_cast<int>(o->logical_index);
}

int last_level_cache(hwloc_topology_t topo, hwloc_obj_t pu) {
    for (hwloc_obj_type_t t : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
        const int i = ancestor_index(topo, pu, t);
        if (i >= 0) return i * 2 + (t == HWLOC_OBJ_L3CACHE ? 0 : 1);
    }
    return -1;
}
}  // namespace

Topology host_topology(size_t min_tiles) {
    const std::vector<int> allowed = allowed_cpus();
    std::vector<CpuPlace> places;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
        const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        for (int i = 0; i < n; ++i) {
            hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
            const int cpu = static_cast<int>(pu->os_index);
            if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) continue;
            CpuPlace p;
            p.cpu = cpu;
            p.core = ancestor_index(topo, pu, HWLOC_OBJ_CORE);
            p.cache = last_level_cache(topo, pu);
            const int node = pu->nodeset != nullptr ? hwloc_bitmap_first(pu->nodeset) : -1;
            p.numa = node < 0 ? 0 : node;
            places.push_back(p);
        }
        hwloc_topology_destroy(topo);
    }
    if (places.empty())  // hwloc unavailable: every allowed CPU, one flat group
        for (int c : allowed) places.push_back(CpuPlace{c, c, 0, 0});

    std::stable_sort(places.begin(), places.end(), [](const CpuPlace& a, const CpuPlace& b) {
        return std::tie(a.numa, a.cache, a.core, a.cpu) < std::tie(b.numa, b.cache, b.core, b.cpu);
    });
    std::map<int, int> per_node;
    for (const auto& p : places) ++per_node[p.numa];
    const int per_cpu = std::max<int>(1, static_cast<int>((min_tiles + places.size() - 1) / places.size()));
    int width = 0;
    for (const auto& [_, count] : per_node) width = std::max(width, count * per_cpu);
    const int height = static_cast<int>(per_node.size());

    // Rows are NUMA nodes; a short row leaves reserved (CPU-less) tiles at its end.
    Topology t = Topology::mesh("host", width, height);
    t.cpu_.assign(static_cast<size_t>(width * height), -1);
    std::vector<CpuPlace> at(static_cast<size_t>(width * height));
    int row = 0;
    for (const auto& [node, count] : per_node) {
        int col = 0;
        for (const auto& p : places)
            if (p.numa == node)
                for (int k = 0; k < per_cpu; ++k) {
                    const int tile = row * width + col++;
                    t.cpu_[static_cast<size_t>(tile)] = p.cpu;
                    at[static_cast<size_t>(tile)] = p;
                }
        for (; col < width; ++col) t.reserved_[static_cast<size_t>(row * width + col)] = true;
        ++row;
    }
    const int n = width * height;
    t.dist_.assign(static_cast<size_t>(n * n), 4);
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) {
            const CpuPlace &p = at[static_cast<size_t>(a)], &q = at[static_cast<size_t>(b)];
            uint8_t d = 4;
            if (a == b || p.cpu == q.cpu) d = 0;
            else if (p.core >= 0 && p.core == q.core) d = 1;
            else if (p.cache >= 0 && p.cache == q.cache) d = 2;
            else if (p.numa == q.numa) d = 3;
            t.dist_[static_cast<size_t>(a * n + b)] = d;
        }
    std::map<int, int> cores, caches;
    for (const auto& p : places) ++cores[p.core], ++caches[p.cache];
    t.summary_ = std::to_string(places.size()) + " CPUs (" + std::to_string(per_cpu) + " tile(s) each), " + std::to_string(cores.size()) + " cores, " +
                 std::to_string(caches.size()) + " last-level caches, " + std::to_string(height) +
                 " NUMA node(s); distance 1 = SMT sibling, 2 = shared cache, 3 = same node, 4 = remote";
    return t;
}

}  // namespace tp
