#include "framework/graph/app_graph.hpp"

#include <stdexcept>

#include "framework/patterns/tree_multicast.hpp"

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
            else if (app_.patterns[static_cast<size_t>(el.pattern)].map) map(static_cast<size_t>(el.pattern));
            else farm(app_.patterns[static_cast<size_t>(el.pattern)]);
        }
        return std::move(g_);
    }

private:
    static GraphNode stages_node(std::string name, std::vector<size_t> stages, const Location& where,
                                 Dispatch d = Dispatch::Single, bool stamp = false, bool reorder = false) {
        GraphNode g;
        g.name = std::move(name);
        g.stages = std::move(stages);
        g.dispatch = d;
        g.stamp_sequence = stamp;
        g.reorder = reorder;
        g.where = where;
        return g;
    }

    size_t add(GraphNode n) {
        g_.nodes.push_back(std::move(n));
        return g_.nodes.size() - 1;
    }

    GraphEdge& link(size_t from, size_t to, const std::string& transport, uint32_t queue, double weight) {
        g_.edges.push_back(GraphEdge{from, to, transport.empty() ? app_.transport : transport,
                                     queue != 0 ? queue : app_.queue, weight});
        return g_.edges.back();
    }

    // Edges from the current tails into `to`, each carrying an equal share of `weight`.
    void feed(size_t to, const std::string& transport, uint32_t queue, double weight) {
        for (size_t t : tails_) link(t, to, transport, queue, weight / double(tails_.size()));
    }

    void stage_node(size_t i) {
        const NodeConfig& nc = app_.pipeline[i];
        const size_t n = add(stages_node(nc.name, {i}, nc.where));
        feed(n, nc.transport, nc.queue, 1.0);
        tails_ = {n};
    }

    void farm(const PatternConfig& f) {
        const bool ordered = f.collect == "ordered";
        const Dispatch d = dispatch_policy(f.dispatch);
        size_t dispatcher;
        if (f.emitter) {
            dispatcher = add(stages_node(f.name + ".emitter", {}, f.where, d, ordered));
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
                    const size_t n = add(stages_node(wname + "." + nc.name, {s}, nc.where));
                    link(prev, n, nc.transport.empty() ? f.transport : nc.transport, nc.queue != 0 ? nc.queue : f.queue, share);
                    prev = n;
                }
            } else {
                std::vector<size_t> chain;
                for (size_t s = f.first; s < f.last; ++s) chain.push_back(s);
                prev = add(stages_node(wname, chain, app_.pipeline[f.first].where));
                link(dispatcher, prev, f.transport, f.queue, share);
            }
            g_.nodes[prev].report_drops = ordered;
            lasts.push_back(prev);
        }
        if (f.collect == "none") {
            tails_ = lasts;
            return;
        }
        const size_t c = add(stages_node(f.name + ".collector", {}, f.where, Dispatch::Single, false, ordered));
        for (size_t l : lasts) link(l, c, f.transport, f.queue, share);
        tails_ = {c};
    }

    // Edge order matters to the runner: a worker's outputs are its children, then the collector.
    void map(size_t p) {
        const PatternConfig& m = app_.patterns[p];
        const Multicast mode = parse_multicast(m.multicast);
        auto node = [&](NodeRole role, std::string name, std::vector<size_t> stages, uint32_t w) {
            GraphNode g{role, static_cast<int>(p), w, std::move(name), std::move(stages)};
            g.where = m.where;
            return add(std::move(g));
        };
        const size_t e = node(NodeRole::MapEmitter, m.name + ".emitter", {}, 0);
        feed(e, m.transport, m.queue, 1.0);
        std::vector<size_t> chain;
        for (size_t s = m.first; s < m.last; ++s) chain.push_back(s);
        std::vector<size_t> workers;
        for (uint32_t w = 0; w < m.workers; ++w)
            workers.push_back(node(NodeRole::MapWorker, m.name + "." + std::to_string(w), chain, w));
        auto word_link = [&](size_t from, size_t to, double weight) {
            link(from, to, m.transport, m.queue, weight).words = true;
        };
        for (uint32_t w = 0; w < m.workers; ++w)
            if (mode == Multicast::linear || w == 0) word_link(e, workers[w], 1.0);
        for (uint32_t w = 0; w < m.workers; ++w)
            for (uint32_t c : children_of(w, m.workers, mode)) word_link(workers[w], workers[c], 1.0);
        const size_t c = node(NodeRole::MapCollector, m.name + ".collector", {}, 0);
        for (uint32_t w = 0; w < m.workers; ++w) word_link(workers[w], c, 1.0 / m.workers);
        link(c, e, m.transport, m.queue, 0.1).words = true;
        g_.edges.back().freed = true;
        tails_ = {c};
    }

    const AppConfig& app_;
    AppGraph g_;
    std::vector<size_t> tails_;
};

}  // namespace

AppGraph build_graph(const AppConfig& app) { return Builder(app).build(); }

}  // namespace tp
