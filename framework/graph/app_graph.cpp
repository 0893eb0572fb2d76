#include "framework/graph/app_graph.hpp"

#include <stdexcept>
#include <utility>

#include "framework/patterns/tree_multicast.hpp"

namespace tp {

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

// A node whose packets go on to the element being built, with the edge's settings.
struct Tail {
    size_t node = 0;
    int output = -1;        // a Branch node's stage output
    std::string label;      // the output's name
    std::string transport;  // the edge's own (`next:`); empty: the target's
    uint32_t queue = 0;
    double weight = 1.0;    // share of the app's packets it carries
};

class Builder {
public:
    explicit Builder(const AppConfig& app) : app_(app) {}

    AppGraph build(bool fuse) {
        const auto& el = app_.elements;
        const auto& order = app_.order;
        into_.assign(el.size(), {});
        flow_in_.assign(el.size(), 0.0);
        weight_in_.assign(el.size(), 0.0);
        for (size_t pos = 0; pos < order.size(); ++pos) {
            const size_t k = order[pos];
            tails_ = std::move(into_[k]);
            flow_ = pos == 0 ? 1.0 : flow_in_[k];
            weight_ = pos == 0 ? 1.0 : weight_in_[k];
            if (el[k].node >= 0) stage_node(static_cast<size_t>(el[k].node));
            else if (app_.patterns[static_cast<size_t>(el[k].pattern)].map) map(static_cast<size_t>(el[k].pattern));
            else farm(app_.patterns[static_cast<size_t>(el[k].pattern)], fuse, fuse && collector_can_fold(k, pos));
            hand_on(k);
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

    // Estimated work per packet of the app, in StageInfo::cost units (about 10 ns), for the
    // node loads; the figures come from per-tile busy shares of the bench apps.
    static constexpr double kHop = 0.2;      // receiving and sending a full burst
    static constexpr double kScatter = 1.0;  // flow-hash dispatch: hash, pick, copy each descriptor
    static constexpr double kReorder = 1.0;  // an ordered farm's reorder window

    // Work of `stages` run in order per packet reaching them; `pass` becomes the share of
    // those packets they pass on.
    double cost(const std::vector<size_t>& stages, double* pass = nullptr) const {
        double c = 0, p = 1.0;
        for (size_t s : stages) {
            const NodeConfig& nc = app_.pipeline[s];
            if (nc.stage == nullptr) continue;
            c += p * nc.stage->cost;
            if (nc.stage->expected_pass) p *= nc.stage->expected_pass(nc.params);
        }
        if (pass != nullptr) *pass = p;
        return c;
    }

    size_t add(GraphNode n, double load) {
        n.load = load;
        g_.nodes.push_back(std::move(n));
        return g_.nodes.size() - 1;
    }

    GraphEdge& link(size_t from, size_t to, const std::string& transport, uint32_t queue, double weight) {
        g_.edges.push_back(GraphEdge{from, to, transport.empty() ? app_.transport : transport,
                                     queue != 0 ? queue : app_.queue, weight});
        return g_.edges.back();
    }

    // Edges from the current tails into `to`, each carrying an equal share of `weight` (of
    // the element's share of the app's packets); an edge's own `next:` settings go first.
    void feed(size_t to, const std::string& transport, uint32_t queue, double weight) {
        for (const Tail& t : tails_) {
            GraphEdge& e = link(t.node, to, t.transport.empty() ? transport : t.transport, t.queue != 0 ? t.queue : queue,
                                t.weight * weight);
            e.output = t.output;
            e.label = t.label;
        }
    }

    // The element just built hands its tails to the elements its edges feed, each edge an
    // equal share of what leaves it (an estimate: which output a packet takes is the data's).
    void hand_on(size_t k) {
        std::vector<const AppEdge*> out;
        for (const AppEdge& e : app_.edges)
            if (e.from == k) out.push_back(&e);
        // A Branch node's edge carries one of its stage's outputs.
        const bool branch = tails_.size() == 1 && g_.nodes[tails_.front().node].dispatch == Dispatch::Branch;
        for (const AppEdge* e : out) {
            const double share = 1.0 / double(out.size());
            flow_in_[e->to] += flow_ * share;
            weight_in_[e->to] += weight_ * share;
            for (const Tail& t : tails_)
                into_[e->to].push_back(Tail{t.node, branch ? int(e->output) : -1, e->output_name, e->transport, e->queue,
                                            weight_ * share / double(tails_.size())});
        }
    }

    // A farm's collector folds into the stage node after it when that node comes next in the
    // build order and the farm's one edge is its only input.
    bool collector_can_fold(size_t k, size_t pos) const {
        const auto& order = app_.order;
        if (pos + 1 >= order.size()) return false;
        const size_t next = order[pos + 1];
        if (app_.elements[next].node < 0) return false;
        size_t from_k = 0, into_next = 0;
        for (const AppEdge& e : app_.edges) {
            from_k += e.from == k;
            into_next += e.to == next;
            if (e.from == k && (e.to != next || !e.transport.empty() || e.queue != 0)) return false;
        }
        return from_k == 1 && into_next == 1;
    }

    void stage_node(size_t i) {
        const NodeConfig& nc = app_.pipeline[i];
        double pass = 1.0;
        const FoldedCollector c = std::exchange(folded_, FoldedCollector{});
        const size_t n = add(stages_node(nc.name, {i}, nc.where), flow_ * (kHop + cost({i}, &pass)) + c.load);
        g_.nodes[n].reorder = c.reorder;
        g_.nodes[n].numbered_by = c.numbered_by;
        if (nc.stage->outputs && nc.stage->outputs(nc.params).size() > 1) g_.nodes[n].dispatch = Dispatch::Branch;
        flow_ *= pass;
        // The workers' links into a folded collector keep the farm's transport and capacity.
        feed(n, c.transport.empty() ? nc.transport : c.transport, c.queue != 0 ? c.queue : nc.queue, 1.0);
        tails_ = {Tail{n}};
    }

    // The single plain node the pipeline ends in so far, which can take over an emitter's work.
    bool emitter_can_fold() const {
        if (tails_.size() != 1 || !tails_.front().transport.empty() || tails_.front().queue != 0) return false;
        const GraphNode& t = g_.nodes[tails_.front().node];
        return t.role == NodeRole::Stages && t.dispatch == Dispatch::Single && !t.stamp_sequence;
    }

    // `fold_emitter`: the node before the farm dispatches (and numbers, for ordered collection)
    // instead of an emitter tile; `fold_collector`: the stage node after it reads the workers
    // (and restores their order) instead of a collector tile. Each saves a hop per packet when
    // tiles share CPUs and a tile that only moves packets buys no parallelism.
    void farm(const PatternConfig& f, bool fold_emitter, bool fold_collector) {
        const bool ordered = f.collect == "ordered";
        const Dispatch d = dispatch_policy(f.dispatch);
        // No dispatcher when the farm opens the pipeline: each worker's source reads its own queue.
        const bool sourced = tails_.empty();
        size_t dispatcher = 0;
        if (f.emitter && fold_emitter && emitter_can_fold()) {
            dispatcher = tails_.front().node;
            g_.nodes[dispatcher].dispatch = d;
            g_.nodes[dispatcher].stamp_sequence = ordered;
            g_.nodes[dispatcher].load += flow_ * kHop;
        } else if (f.emitter) {
            dispatcher = add(stages_node(f.name + ".emitter", {}, f.where, d, ordered), flow_ * kHop);
            feed(dispatcher, f.transport, f.queue, 1.0);
        } else if (!sourced) {
            dispatcher = tails_.front().node;  // check_shape, wire_app: a single node feeds an emitter-less farm
            g_.nodes[dispatcher].dispatch = d;
        }
        if (d == Dispatch::FlowHash && !sourced) g_.nodes[dispatcher].load += flow_ * kScatter;
        const double share = 1.0 / f.workers;
        // Flow-hash dispatch splits each burst W ways: a worker pays its hop per smaller burst.
        const double first_hop = kHop * (d == Dispatch::FlowHash && !sourced ? f.workers : 1);
        std::vector<size_t> lasts;
        const double in = flow_;
        double flow_out = in;
        for (uint32_t w = 0; w < f.workers; ++w) {
            double at = in;  // share of the app's packets reaching the stage
            const std::string wname = f.name + "." + std::to_string(w);
            size_t prev = dispatcher;
            if (f.worker_pipeline) {
                for (size_t s = f.first; s < f.last; ++s) {
                    const NodeConfig& nc = app_.pipeline[s];
                    const double hop = s == f.first ? first_hop : kHop;
                    double pass = 1.0;
                    const size_t n = add(stages_node(wname + "." + nc.name, {s}, nc.where), at * share * (hop + cost({s}, &pass)));
                    g_.nodes[n].worker = w;
                    g_.nodes[n].report_drops = ordered;  // every tile: holes pass down the pipeline
                    at *= pass;
                    if (!sourced || s != f.first)
                        link(prev, n, nc.transport.empty() ? f.transport : nc.transport, nc.queue != 0 ? nc.queue : f.queue, share);
                    prev = n;
                }
            } else {
                std::vector<size_t> chain;
                for (size_t s = f.first; s < f.last; ++s) chain.push_back(s);
                double pass = 1.0;
                const double load = in * share * (first_hop + cost(chain, &pass));
                prev = add(stages_node(wname, chain, app_.pipeline[f.first].where), load);
                g_.nodes[prev].worker = w;
                at *= pass;
                // The chain's link from the dispatcher is its first stage's, else the farm's.
                const NodeConfig& first = app_.pipeline[f.first];
                if (!sourced)
                    link(dispatcher, prev, first.transport.empty() ? f.transport : first.transport,
                         first.queue != 0 ? first.queue : f.queue, share);
            }
            g_.nodes[prev].report_drops = ordered;
            lasts.push_back(prev);
            flow_out = at;
        }
        flow_ = flow_out;
        if (f.collect == "none") {
            tails_ = tails_of(lasts);
            return;
        }
        // Round robin and flow hash wait for a slow worker (ordered farms keep strict turns);
        // on demand passes it by, so its collector must hold the numbering back.
        const int numbered_by = ordered && d == Dispatch::OnDemand && !sourced ? static_cast<int>(dispatcher) : -1;
        if (fold_collector) {
            tails_ = tails_of(lasts);
            folded_ = FoldedCollector{flow_ * (first_hop + (ordered ? kReorder : 0.0)), ordered, f.transport, f.queue, numbered_by};
            return;
        }
        const size_t c = add(stages_node(f.name + ".collector", {}, f.where, Dispatch::Single, false, ordered),
                             flow_ * (first_hop + (ordered ? kReorder : 0.0)));  // as many bursts as the workers get
        g_.nodes[c].numbered_by = numbered_by;
        for (size_t l : lasts) link(l, c, f.transport, f.queue, share);
        tails_ = {Tail{c}};
    }

    static std::vector<Tail> tails_of(const std::vector<size_t>& nodes) {
        std::vector<Tail> v;
        for (size_t n : nodes) v.push_back(Tail{n});
        return v;
    }

    // Edge order matters to the runner: a worker's outputs are its children, then the collector.
    void map(size_t p) {
        const PatternConfig& m = app_.patterns[p];
        const Multicast mode = parse_multicast(m.multicast);
        double worker_pass = 1.0;
        auto node = [&](NodeRole role, std::string name, std::vector<size_t> stages, uint32_t w) {
            GraphNode g{role, static_cast<int>(p), w, std::move(name), std::move(stages)};
            g.where = m.where;
            // A worker pays its hop per task (a burst) and its stages on its share of it.
            double pass = 1.0;
            const double load = role == NodeRole::MapWorker ? flow_ * (kHop + cost(g.stages, &pass) / m.workers) : flow_ * kHop;
            if (role == NodeRole::MapWorker) worker_pass = pass;
            return add(std::move(g), load);
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
        tails_ = {Tail{c}};
        flow_ *= worker_pass;
    }

    const AppConfig& app_;
    AppGraph g_;
    std::vector<Tail> tails_;
    std::vector<std::vector<Tail>> into_;  // per element: the tails that feed it
    std::vector<double> flow_in_, weight_in_;  // per element: estimated share entering it
    double flow_ = 1.0;  // estimated share of the app's packets leaving the tails
    double weight_ = 1.0;  // share of the app's packets entering the element (edge weights)
    // A farm's collector folded into the next stage node: what that node takes over.
    struct FoldedCollector {
        double load = 0;
        bool reorder = false;   // restores the farm's order
        std::string transport;  // the farm's links ("" = the node's own)
        uint32_t queue = 0;
        int numbered_by = -1;   // GraphNode::numbered_by
    };
    FoldedCollector folded_;
};

}  // namespace

AppGraph build_graph(const AppConfig& app, bool fuse) { return Builder(app).build(fuse); }

bool prefetches_bursts(const AppConfig& app, const GraphNode& node) {
    if (app.prefetch != "burst" || node.role != NodeRole::Stages || node.stages.empty()) return false;
    if (app.pipeline[node.stages.front()].stage->kind == StageKind::Source) return false;
    for (size_t s : node.stages)
        if (app.pipeline[s].stage->reads_packets) return true;
    return false;
}

}  // namespace tp
