// AppRunner::collect_edges: the app's edges as wired, each with what the one tile sending on it
// handed it (a branching node counts per output; a node of one output passes on all it keeps).
#include "framework/graph/app_runner.hpp"

#include "framework/runtime/node_task.hpp"

namespace tp {

void AppRunner::collect_edges(RunReport& r) const {
    const AppGraph& g = plan_.graph;
    // Each node's last stage: its packets passed on are what its edges share.
    std::vector<const Instance*> last(g.nodes.size(), nullptr);
    for (const Instance& in : instances_) last[in.node] = &in;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        std::vector<size_t> outs;  // descriptor outputs, in the order make_task gave them
        for (size_t e : g.outputs_of(n))
            if (!g.edges[e].words && !g.edges[e].freed) outs.push_back(e);
        const auto* node = dynamic_cast<const NodeTask*>(tasks_[n].get());
        const uint64_t passed = last[n] != nullptr ? last[n]->stage->stats().out.get() : tasks_[n]->passed_packets();
        for (size_t k = 0; k < outs.size(); ++k) {
            const GraphEdge& edge = g.edges[outs[k]];
            if (edge.label.empty()) continue;  // a farm's or map's own link
            EdgeReport e{g.nodes[n].name, edge.label, g.nodes[edge.to].name, last[n] != nullptr ? instance_name(*last[n]) : "",
                         edge.output >= 0};
            if (node != nullptr && !node->edge_counts().empty()) {
                e.packets = node->edge_counts()[k].packets.get();
                e.bytes = node->edge_counts()[k].bytes.get();
            } else if (outs.size() == 1) {
                e.packets = passed;
                e.bytes = last[n] != nullptr ? last[n]->stage->stats().bytes_out.get() : tasks_[n]->passed_bytes();
            } else {
                continue;  // a dispatcher's edges to workers carry no label
            }
            e.share = passed != 0 ? double(e.packets) / double(passed) : 0.0;
            r.edges.push_back(std::move(e));
        }
    }
}

}  // namespace tp
