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
    if (!g.stages.empty()) return memory_policy_of(app, app.pipeline[g.stages.front()], g.worker);
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

    // A source's pool sits where its node's setting puts the node's own memory.
    auto pool_at = [&m](const MemoryPlace& p) { return size_t(std::find(m.pools.begin(), m.pools.end(), p) - m.pools.begin()); };
    m.pool_of_node.assign(n, 0);
    for (size_t i = 0; i < n; ++i)
        if (is_source(app, plan.graph.nodes[i])) m.sources.push_back(i);
    for (size_t i : m.sources) {
        m.pool_of_node[i] = pool_at(m.node[i]);
        if (m.pool_of_node[i] == m.pools.size()) m.pools.push_back(m.node[i]), m.pool_follows.push_back(static_cast<int>(i));
    }
    if (m.pools.empty()) m.pools.push_back(place(memory_policy_of(app), m.app_nodes, m.app_nodes)), m.pool_follows.push_back(-1);
    // Other stage nodes allocate (copies, reassembly) from the pool of their own place, else the
    // first; a map's tiles share its tasks' descriptors, so they keep the first.
    for (size_t i = 0; i < n; ++i)
        if (plan.graph.nodes[i].role == NodeRole::Stages && !plan.graph.nodes[i].stages.empty() &&
            !std::binary_search(m.sources.begin(), m.sources.end(), i) && pool_at(m.node[i]) < m.pools.size())
            m.pool_of_node[i] = pool_at(m.node[i]);
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
