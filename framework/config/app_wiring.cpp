#include "framework/config/app_wiring.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "framework/config/join.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/config/yaml_location.hpp"

namespace tp {

namespace {

std::string names(const std::vector<OutputSpec>& outs) {
    std::vector<std::string> v;
    for (const auto& o : outs) v.push_back(o.name);
    return v.empty() ? "none" : join(v);
}

const char* kOneEdge = "one output feeds one edge: copy packets to several nodes with a `tee` stage";

// One `OUTPUT: {to: NODE, transport: T, queue: Q}`.
void read_edge_settings(const YAML::Node& v, const std::string& file, NextEdge& e) {
    for (auto it = v.begin(); it != v.end(); ++it) {
        const Location kw = yaml_location(file, it->first.Mark());
        const Location vw = yaml_location(file, it->second.Mark());
        const std::string k = it->first.IsScalar() ? it->first.Scalar() : "";
        if (!it->second.IsScalar()) throw LocatedError(vw, "'" + k + "' must be a single value");
        const std::string s = it->second.Scalar();
        if (k == "to") {
            e.to = s;
            e.to_where = vw;
        } else if (k == "transport") {
            const auto& known = transport_names();
            if (std::find(known.begin(), known.end(), s) == known.end())
                throw LocatedError(vw, "unknown transport '" + s + "' (known: " + join(known) + ")");
            e.transport = s;
        } else if (k == "queue") {
            char* end = nullptr;
            const unsigned long long q = std::strtoull(s.c_str(), &end, 10);
            if (s.empty() || *end != '\0' || q < 2 || q > (1u << 20) || (q & (q - 1)) != 0)
                throw LocatedError(vw, "queue must be a power of two between 2 and 1048576, got '" + s + "'");
            e.queue = static_cast<uint32_t>(q);
        } else {
            throw LocatedError(kw, "unknown key '" + k + "' in an edge (known: to, transport, queue)");
        }
    }
    if (e.to.empty()) throw LocatedError(e.where, "edge of output '" + e.output + "' has no 'to:' (the node it feeds)");
}

}  // namespace

std::vector<NextEdge> read_next(const YAML::Node& v, const std::string& file) {
    const Location where = yaml_location(file, v.Mark());
    if (v.IsScalar()) return {NextEdge{"", v.Scalar(), "", 0, where, where}};
    if (!v.IsMap() || v.size() == 0)
        throw LocatedError(where, "next: must name a node, or map each output to a node ({OUTPUT: NODE, ...})");
    std::vector<NextEdge> edges;
    std::set<std::string> seen;
    for (auto it = v.begin(); it != v.end(); ++it) {
        NextEdge e;
        e.where = yaml_location(file, it->first.Mark());
        if (!it->first.IsScalar()) throw LocatedError(e.where, "an output's name must be a single value");
        e.output = it->first.Scalar();
        if (!seen.insert(e.output).second)
            throw LocatedError(e.where, "output '" + e.output + "' is wired twice: " + kOneEdge);
        const YAML::Node to = it->second;
        e.to_where = yaml_location(file, to.Mark());
        if (to.IsScalar()) e.to = to.Scalar();
        else if (to.IsSequence())
            throw LocatedError(e.to_where, "output '" + e.output + "' names " + std::to_string(to.size()) + " nodes: " + kOneEdge);
        else if (to.IsMap()) read_edge_settings(to, file, e);
        else throw LocatedError(e.to_where, "output '" + e.output + "' must name a node, or be {to: NODE, transport: T, queue: Q}");
        edges.push_back(std::move(e));
    }
    return edges;
}

bool app_branches(const AppConfig& app) {
    for (const NodeConfig& n : app.pipeline)
        if (n.has_next) return true;
    for (const PatternConfig& f : app.patterns)
        if (f.has_next) return true;
    return false;
}

const std::string& element_name(const AppConfig& app, size_t k) {
    const PipelineElement& e = app.elements[k];
    return e.node >= 0 ? app.pipeline[static_cast<size_t>(e.node)].name : app.patterns[static_cast<size_t>(e.pattern)].name;
}

std::vector<OutputSpec> element_outputs(const AppConfig& app, size_t k) {
    const PipelineElement& e = app.elements[k];
    if (e.node >= 0) {
        const NodeConfig& n = app.pipeline[static_cast<size_t>(e.node)];
        std::vector<OutputSpec> outs = n.stage->outputs ? n.stage->outputs(n.params) : std::vector<OutputSpec>{};
        if (outs.empty() && n.stage->kind != StageKind::Sink) {
            // A processor without outputs (a tee of none): its own check says why.
            if (n.stage->check_params) n.stage->check_params(n.params);
            throw LocatedError(n.where, "node '" + n.name + "' (" + n.stage->name + ") has no outputs for these parameters");
        }
        return outs;
    }
    const PatternConfig& f = app.patterns[static_cast<size_t>(e.pattern)];
    if (app.pipeline[f.last - 1].stage->kind == StageKind::Sink) return {};
    return single_output();
}

namespace {

struct ElementView {
    const std::vector<NextEdge>* next;
    bool has_next;
    Location where, next_where;
    std::string what;  // "node 'cls' (classify)", "farm 'fw'"
};

ElementView view(const AppConfig& app, size_t k) {
    const PipelineElement& e = app.elements[k];
    if (e.node >= 0) {
        const NodeConfig& n = app.pipeline[static_cast<size_t>(e.node)];
        return {&n.next, n.has_next, n.where, n.next_where, "node '" + n.name + "' (" + n.stage->name + ")"};
    }
    const PatternConfig& f = app.patterns[static_cast<size_t>(e.pattern)];
    return {&f.next, f.has_next, f.where, f.next_where, std::string(f.map ? "map '" : "farm '") + f.name + "'"};
}

bool starts_with_source(const AppConfig& app, size_t k) {
    const PipelineElement& e = app.elements[k];
    const size_t first = e.node >= 0 ? static_cast<size_t>(e.node) : app.patterns[static_cast<size_t>(e.pattern)].first;
    return app.pipeline[first].stage->kind == StageKind::Source;
}

// The edges an element's `next:` (or its place in the list) gives it.
void wire_element(AppConfig& app, size_t k, const std::map<std::string, size_t>& by_name) {
    const ElementView v = view(app, k);
    const std::vector<OutputSpec> outs = element_outputs(app, k);
    if (!v.has_next) {
        if (outs.empty()) return;
        if (outs.size() > 1)
            throw LocatedError(v.where, v.what + " has outputs " + names(outs) + ": wire each under next: (OUTPUT: NODE)");
        if (k + 1 == app.elements.size())
            throw LocatedError(v.where, "output '" + outs[0].name + "' of " + v.what +
                                            " is not wired: nothing follows it (end the pipeline with a sink, or add next:)");
        app.edges.push_back(AppEdge{k, k + 1, 0, outs[0].name, "", 0});
        return;
    }
    if (outs.empty())
        throw LocatedError(v.next_where, v.what + " has no outputs (it ends in a sink): remove its next:");
    std::set<size_t> wired;
    for (const NextEdge& e : *v.next) {
        size_t o = 0;
        if (e.output.empty()) {
            if (outs.size() != 1)
                throw LocatedError(e.where, "next: " + e.to + " names one node, but " + v.what + " has outputs " + names(outs) +
                                                ": map each (OUTPUT: NODE)");
            if (e.output.empty() && e.to_element >= 0) throw LocatedError(e.where, "an output needs a name");
        } else {
            while (o < outs.size() && outs[o].name != e.output) ++o;
            if (o == outs.size())
                throw LocatedError(e.where, v.what + " has no output '" + e.output + "' (its outputs: " + names(outs) + ")");
        }
        if (!wired.insert(o).second) throw LocatedError(e.where, "output '" + outs[o].name + "' is wired twice: " + kOneEdge);
        if (e.to_element >= 0) {
            app.edges.push_back(AppEdge{k, static_cast<size_t>(e.to_element), static_cast<uint8_t>(o), outs[o].name, "", 0});
            continue;
        }
        const auto to = by_name.find(e.to);
        if (to == by_name.end()) {
            std::vector<std::string> known;
            for (const auto& [name, _] : by_name) known.push_back(name);
            throw LocatedError(e.to_where, "no node named '" + e.to + "' in the pipeline (nodes: " + join(known) + ")");
        }
        app.edges.push_back(AppEdge{k, to->second, static_cast<uint8_t>(o), outs[o].name, e.transport, e.queue});
    }
    for (size_t o = 0; o < outs.size(); ++o)
        if (wired.count(o) == 0)
            throw LocatedError(v.next_where, "output '" + outs[o].name + "' of " + v.what + " is not wired (its outputs: " +
                                                 names(outs) + "; each needs a node under next:)");
}

// A worker's chain runs in order on one path: a stage of several outputs stands outside it.
void check_worker_chains(const AppConfig& app) {
    for (const PatternConfig& f : app.patterns)
        for (size_t i = f.first; i < f.last; ++i) {
            const NodeConfig& n = app.pipeline[i];
            const std::vector<OutputSpec> outs = n.stage->outputs ? n.stage->outputs(n.params) : std::vector<OutputSpec>{};
            if (outs.size() > 1)
                throw LocatedError(n.where, "node '" + n.name + "' (" + n.stage->name + ") has outputs " + names(outs) + ": a " +
                                                (f.map ? "map" : "farm") + "'s worker chain runs in order, so a stage of "
                                                "several outputs stands before or after the " + (f.map ? "map" : "farm"));
        }
}

// No edge into a source (checked before the order: such an edge closes a cycle).
void check_sources(const AppConfig& app) {
    for (const AppEdge& e : app.edges)
        if (starts_with_source(app, e.to)) {
            const ElementView v = view(app, e.to);
            throw LocatedError(v.where, v.what + " starts with a source: no edge may feed it (it is fed by " +
                                            element_name(app, e.from) + ")");
        }
}

// Every element fed except the source; a farm without emitter fed by one node
// with one output (that node dispatches to its workers).
void check_feeds(const AppConfig& app) {
    std::vector<std::vector<size_t>> into(app.elements.size());
    for (size_t i = 0; i < app.edges.size(); ++i) into[app.edges[i].to].push_back(i);
    for (size_t k = 0; k < app.elements.size(); ++k) {
        const ElementView v = view(app, k);
        const bool source = starts_with_source(app, k);
        if (!source && into[k].empty())
            throw LocatedError(v.where, "nothing feeds " + v.what + ": name it under a node's next:, or place it after "
                                                                "a node with one output");
        const PipelineElement& e = app.elements[k];
        if (e.pattern < 0 || source) continue;
        const PatternConfig& f = app.patterns[static_cast<size_t>(e.pattern)];
        if (f.emitter) continue;
        const AppEdge& in = app.edges[into[k][0]];
        if (into[k].size() != 1 || app.elements[in.from].node < 0 || element_outputs(app, in.from).size() != 1)
            throw LocatedError(f.where, "a farm without emitter must be fed by a single node with one output, which "
                                        "dispatches to its workers");
    }
}

// Topological order, list order among the ready ones; a cycle is refused and printed.
void order_elements(AppConfig& app) {
    const size_t n = app.elements.size();
    std::vector<size_t> indegree(n, 0);
    for (const AppEdge& e : app.edges) ++indegree[e.to];
    std::vector<bool> placed(n, false);
    app.order.clear();
    while (app.order.size() < n) {
        size_t k = 0;
        while (k < n && (placed[k] || indegree[k] != 0)) ++k;
        if (k == n) break;
        placed[k] = true;
        app.order.push_back(k);
        for (const AppEdge& e : app.edges)
            if (e.from == k) --indegree[e.to];
    }
    if (app.order.size() == n) return;
    // Every element left is on a cycle or downstream of one: walk back along edges between
    // them until an element repeats.
    size_t at = 0;
    while (placed[at]) ++at;
    std::vector<size_t> path;
    std::vector<int> seen_at(n, -1);
    while (seen_at[at] < 0) {
        seen_at[at] = static_cast<int>(path.size());
        path.push_back(at);
        for (const AppEdge& e : app.edges)
            if (e.to == at && !placed[e.from]) {
                at = e.from;
                break;
            }
    }
    std::string cycle;
    const size_t start = static_cast<size_t>(seen_at[at]);
    for (size_t i = path.size(); i-- > start;) cycle += element_name(app, path[i]) + " -> ";
    cycle += element_name(app, path.back());
    throw LocatedError(view(app, path.back()).where, "the app's edges form a cycle: " + cycle);
}

}  // namespace

void wire_app(AppConfig& app) {
    app.edges.clear();
    std::map<std::string, size_t> by_name;
    for (size_t k = 0; k < app.elements.size(); ++k) by_name.emplace(element_name(app, k), k);
    for (size_t k = 0; k < app.elements.size(); ++k) wire_element(app, k, by_name);
    check_worker_chains(app);
    check_sources(app);
    order_elements(app);  // before check_feeds: a cycle leaves what follows it unfed, and is the cause
    check_feeds(app);
}

}  // namespace tp
