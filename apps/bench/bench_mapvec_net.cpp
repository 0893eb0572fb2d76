#include "apps/bench/bench_mapvec_net.hpp"

#include <string>

#include "framework/config/app_config.hpp"

namespace tp::bench {

MapOnNetwork map_on_network(uint32_t workers, Multicast mode, uint32_t capacity) {
    AppGraph g;
    auto node = [&](std::string name) {
        GraphNode n;
        n.name = std::move(name);
        g.nodes.push_back(n);
        return g.nodes.size() - 1;
    };
    const size_t emitter = node("map.emitter");
    for (uint32_t w = 0; w < workers; ++w) node("map." + std::to_string(w));
    const size_t collector = node("map.collector");
    auto link = [&](size_t from, size_t to) {
        GraphEdge e{from, to, "udn", capacity};
        e.words = true;
        g.edges.push_back(e);
    };
    for (uint32_t w = 0; w < workers; ++w) {
        const uint32_t parent = parent_of(w, workers, mode);
        link(parent == kFromEmitter ? emitter : 1 + parent, 1 + w);
    }
    for (uint32_t w = 0; w < workers; ++w) link(1 + w, collector);

    MapOnNetwork m;
    m.plan = std::make_unique<AppPlan>(AppPlan{std::move(g), Topology::mesh("map", static_cast<int>(workers) + 2, 1), {}, {}, {}, 0});
    for (const GraphEdge& e : m.plan->graph.edges) m.plan->links.push_back(PlannedLink{e.from, e.to, e.transport, e.capacity, 1});
    const AppConfig defaults;  // the network: setting's defaults
    m.plan->networks = plan_networks(defaults, *m.plan);
    m.network = std::make_unique<AppNetworks>(*m.plan);
    for (uint32_t w = 0; w < workers; ++w) m.inputs.push_back(m.network->word_channel(w));
    for (uint32_t w = 0; w < workers; ++w) m.partials.push_back(m.network->word_channel(workers + w));
    return m;
}

}  // namespace tp::bench
