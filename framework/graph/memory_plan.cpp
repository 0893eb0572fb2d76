#include "framework/graph/memory_plan.hpp"

#include <rte_eal.h>
#include <rte_malloc.h>

#include <algorithm>

#include "framework/eal/eal_session.hpp"

namespace tp {

namespace {

MemoryPlace place(MemoryPolicy p, std::vector<int> local, const std::vector<int>& app_nodes) {
    switch (p) {
        case MemoryPolicy::Local: return {p, std::move(local)};
        case MemoryPolicy::Interleave: return {p, app_nodes};
        case MemoryPolicy::FirstTouch: break;
    }
    return {};
}

bool is_source(const AppConfig& app, const GraphNode& g) {
    return !g.stages.empty() && app.pipeline[g.stages.front()].stage->kind == StageKind::Source;
}

}  // namespace

MemoryPolicy memory_policy_of(const AppConfig& app, const AppGraph& graph, size_t n) {
    const GraphNode& g = graph.nodes[n];
    if (!g.stages.empty()) return memory_policy_of(app, app.pipeline[g.stages.front()]);
    if (g.pattern >= 0) return memory_policy_of(app, app.patterns[static_cast<size_t>(g.pattern)]);
    // A farm's emitter or collector tile: named after its farm ("fw.emitter").
    for (const PatternConfig& f : app.patterns)
        if (g.name.compare(0, f.name.size() + 1, f.name + ".") == 0) return memory_policy_of(app, f);
    return memory_policy_of(app);
}

MemoryPlan plan_memory(const AppConfig& app, const AppPlan& plan) {
    MemoryPlan m;
    m.bind = memory_policy_given(app);
    const size_t n = plan.graph.nodes.size();
    const int fallback = host_numa_nodes().front();
    for (size_t i = 0; i < n; ++i) {
        const int numa = numa_node_of_cpu(plan.threads.cpu_of_thread[plan.threads.thread_of_node[i]]);
        m.numa_of_node.push_back(numa < 0 ? fallback : numa);
    }
    m.app_nodes = m.numa_of_node;
    std::sort(m.app_nodes.begin(), m.app_nodes.end());
    m.app_nodes.erase(std::unique(m.app_nodes.begin(), m.app_nodes.end()), m.app_nodes.end());
    for (size_t i = 0; i < n; ++i)
        m.node.push_back(place(memory_policy_of(app, plan.graph, i), {m.numa_of_node[i]}, m.app_nodes));

    std::vector<int> source_nodes;
    for (size_t i = 0; i < n; ++i)
        if (is_source(app, plan.graph.nodes[i])) {
            if (m.pool_follows < 0) m.pool_follows = static_cast<int>(i);
            source_nodes.push_back(m.numa_of_node[i]);
        }
    std::sort(source_nodes.begin(), source_nodes.end());
    source_nodes.erase(std::unique(source_nodes.begin(), source_nodes.end()), source_nodes.end());
    const MemoryPolicy pool_policy = m.pool_follows >= 0 ? memory_policy_of(app, plan.graph, static_cast<size_t>(m.pool_follows))
                                                         : memory_policy_of(app);
    m.pool = place(pool_policy, source_nodes.empty() ? m.app_nodes : source_nodes, m.app_nodes);
    return m;
}

int eal_socket_of(const MemoryPlace& place) {
    if (place.policy != MemoryPolicy::Local || place.nodes.size() != 1 || !eal_started()) return -1;
    rte_malloc_socket_stats st{};
    if (rte_malloc_get_socket_stats(place.nodes.front(), &st) != 0 || st.heap_totalsz_bytes == 0) return -1;
    return place.nodes.front();
}

std::vector<BoundArea> bind_mempool(rte_mempool* mp, const MemoryPlace& place) {
    if (eal_started() && rte_eal_has_hugepages() != 0)
        return {{std::string("pool ") + mp->name, nullptr, 0, place, kHugepagesStay}};
    struct Walk {
        std::vector<BoundArea> areas;
        const MemoryPlace* place;
        std::string what;
    } walk{{}, &place, std::string("pool ") + mp->name};
    rte_mempool_mem_iter(
        mp,
        [](rte_mempool*, void* opaque, rte_mempool_memhdr* hdr, unsigned) {
            auto& w = *static_cast<Walk*>(opaque);
            w.areas.push_back({w.what, hdr->addr, hdr->len, *w.place, bind_area(hdr->addr, hdr->len, *w.place)});
        },
        &walk);
    return std::move(walk.areas);
}

}  // namespace tp
