#include "framework/graph/app_graph.hpp"

#include <stdexcept>

namespace tp {

Dispatch dispatch_policy(const std::string& name) {
    if (name == "round_robin") return Dispatch::RoundRobin;
    if (name == "on_demand") return Dispatch::OnDemand;
    if (name == "flow_hash") return Dispatch::FlowHash;
    throw std::invalid_argument("unknown dispatch '" + name + "'");
}

std::vector<size_t> AppGraph::inputs_of(size_t node) const {
    std::vector<size_t> v;
    for (size_t e = 0; e < edges.size(); ++e)
        if (edges[e].to == node) v.push_back(e);
    return v;
}

std::vector<size_t> AppGraph::outputs_of(size_t node) const {
    std::vector<size_t> v;
    for (size_t e = 0; e < edges.size(); ++e)
        if (edges[e].from == node) v.push_back(e);
    return v;
}

namespace {

class Builder {
public:
    explicit Builder(const AppConfig& app) : app_(app) {}

    AppGraph build() {
        for (const PipelineElement& el : app_.elements) {
            if (el.node >= 0) stage_node(static_cast<size_t>(el.node));
            else farm(app_.farms[static_cast<size_t>(el.farm)]);
        }
        return std::move(g_);
    }

private:
    size_t add(GraphNode n) {
        g_.nodes.push_back(std::move(n));
        return g_.nodes.size() - 1;
    }

    void link(size_t from, size_t to, const std::string& transport, uint32_t queue, double weight) {
        g_.edges.push_back(GraphEdge{from, to, transport.empty() ? app_.transport : transport,
                                     queue != 0 ? queue : app_.queue, weight});
    }

    // Edges from the current tails into `to`, each carrying an equal share of `weight`.
    void feed(size_t to, const std::string& transport, uint32_t queue, double weight) {
        for (size_t t : tails_) link(t, to, transport, queue, weight / double(tails_.size()));
    }

    void stage_node(size_t i) {
        const NodeConfig& nc = app_.pipeline[i];
        const size_t n = add(GraphNode{nc.name, {i}, Dispatch::Single, false, false, false, nc.where});
        feed(n, nc.transport, nc.queue, 1.0);
        tails_ = {n};
    }

    void farm(const FarmConfig& f) {
        const bool ordered = f.collect == "ordered";
        const Dispatch d = dispatch_policy(f.dispatch);
        size_t dispatcher;
        if (f.emitter) {
            dispatcher = add(GraphNode{f.name + ".emitter", {}, d, ordered, false, false, f.where});
            feed(dispatcher, f.transport, f.queue, 1.0);
        } else {
            dispatcher = tails_.front();  // check_shape: a single node precedes an emitter-less farm
            g_.nodes[dispatcher].dispatch = d;
        }
        const double share = 1.0 / f.workers;
        std::vector<size_t> lasts;
        for (uint32_t w = 0; w < f.workers; ++w) {
            const std::string wname = f.name + "." + std::to_string(w);
            size_t prev = dispatcher;
            if (f.worker_pipeline) {
                for (size_t s = f.first; s < f.last; ++s) {
                    const NodeConfig& nc = app_.pipeline[s];
                    const size_t n = add(GraphNode{wname + "." + nc.name, {s}, Dispatch::Single, false, false, false, nc.where});
                    link(prev, n, nc.transport.empty() ? f.transport : nc.transport, nc.queue != 0 ? nc.queue : f.queue, share);
                    prev = n;
                }
            } else {
                std::vector<size_t> chain;
                for (size_t s = f.first; s < f.last; ++s) chain.push_back(s);
                prev = add(GraphNode{wname, chain, Dispatch::Single, false, false, false, app_.pipeline[f.first].where});
                link(dispatcher, prev, f.transport, f.queue, share);
            }
            g_.nodes[prev].report_drops = ordered;
            lasts.push_back(prev);
        }
        if (f.collect == "none") {
            tails_ = lasts;
            return;
        }
        const size_t c = add(GraphNode{f.name + ".collector", {}, Dispatch::Single, false, ordered, false, f.where});
        for (size_t l : lasts) link(l, c, f.transport, f.queue, share);
        tails_ = {c};
    }

    const AppConfig& app_;
    AppGraph g_;
    std::vector<size_t> tails_;
};

}  // namespace

AppGraph build_graph(const AppConfig& app) { return Builder(app).build(); }

}  // namespace tp
