// AppBuilderState::assemble: the program's app through the steps a config file goes through
// (app_config.hpp), each value located at its place in the program.
#include <optional>

#include "framework/builder/app_state.hpp"
#include "framework/plugin/plugin_loader.hpp"

namespace tp {

namespace {

class Assembly {
public:
    explicit Assembly(const AppBuilderState& s) : s_(s), node_at_(s.nodes.size()), pattern_at_(s.patterns.size()) {}

    AppConfig run() {
        const Location app_where{"app '" + s_.name + "'"};
        AppConfig app;
        app.name = s_.name;
        app.topology_where = app_where;
        // Before any stage is looked up, as the CLI loads them before reading the config.
        load_plugins({});
        for (const std::string& path : s_.plugins) load_plugin(path, Location{"app '" + s_.name + "' plugin " + path});
        for (const auto& [key, text] : s_.settings) set_app_setting(app, key, text, Location{"app '" + s_.name + "' setting " + key});
        for (size_t i = 0; i < s_.pipeline.size(); ++i) {
            const AppBuilderState::Step& step = s_.pipeline[i];
            const std::string at = "pipeline[" + std::to_string(i) + "]";
            mine(step.ref, at);
            if (step.kind == AppBuilderState::Step::Node) {
                add_pipeline_node(app, node(step.ref.id, at));
                continue;
            }
            pattern(app, step.ref.id, at);
        }
        wire(app);
        for (size_t n = 0; n < s_.nodes.size(); ++n)
            if (node_at_[n].empty())
                throw LocatedError(Location{"node #" + std::to_string(n) + " (stage " + s_.nodes[n].stage + ")"},
                                   "is in no pipeline and no worker: connect every node made with AppBuilder::stage");
        complete_app(app, app_where);
        return app;
    }

private:
    // node.out(): the `next:` of the pipeline's nodes, each target by its pipeline index.
    void wire(AppConfig& app) const {
        for (size_t i = 0; i < s_.pipeline.size(); ++i) {
            const AppBuilderState::Step& step = s_.pipeline[i];
            if (step.kind == AppBuilderState::Step::Node) {
                NodeConfig& nc = app.pipeline[static_cast<size_t>(app.elements[i].node)];
                for (const auto& [output, target] : s_.nodes[step.ref.id].outs)
                    add_next(nc.next, nc.has_next, nc.next_where, nc.where, output, target);
            } else {
                PatternConfig& f = app.patterns[static_cast<size_t>(app.elements[i].pattern)];
                for (const auto& target : s_.patterns[step.ref.id].outs) add_next(f.next, f.has_next, f.next_where, f.where, "out", target);
            }
        }
    }

    // One out() of the element at `at`: its target by pipeline index.
    void add_next(std::vector<NextEdge>& next, bool& has_next, Location& next_where, const Location& at,
                  const std::string& output, const std::pair<int, AppBuilderState::Ref>& target) const {
        const Location where{at.file + " out(\"" + output + "\")"};
        long to = -1;
        for (size_t j = 0; j < s_.pipeline.size() && to < 0; ++j)
            if (int(s_.pipeline[j].kind) == target.first && s_.pipeline[j].ref.owner == target.second.owner &&
                s_.pipeline[j].ref.id == target.second.id)
                to = static_cast<long>(j);
        if (to < 0) throw LocatedError(where, "feeds a node that is not in the pipeline: list it in AppBuilder::pipeline");
        next.push_back(NextEdge{output, "", "", 0, where, where, to});
        has_next = true;
        next_where = at;
    }

    void mine(const AppBuilderState::Ref& r, const std::string& at) const {
        if (r.owner != &s_) throw LocatedError(Location{at}, "was made by another AppBuilder");
    }

    NodeConfig node(size_t id, const std::string& at) {
        const AppBuilderState::NodeSpec& spec = s_.nodes.at(id);
        const Location where{at + " (stage " + spec.stage + ")"};
        if (!node_at_[id].empty())
            throw LocatedError(where, "this node is already at " + node_at_[id] +
                                          ": make one node for each place (AppBuilder::stage)");
        node_at_[id] = at;
        NodeConfig nc;
        nc.where = where;
        nc.stage = find_stage(spec.stage, where);
        for (const auto& [key, text] : spec.settings) {
            if (key == "name") set_node_name(nc, text, where);
            else if (key == "stage") throw LocatedError(where, "a node's stage is given when it is made (AppBuilder::stage)");
            else set_node_setting(nc, key, text, where);
        }
        return nc;
    }

    void pattern(AppConfig& app, size_t id, const std::string& at) {
        const AppBuilderState::PatternSpec& spec = s_.patterns.at(id);
        const std::string kind = spec.map ? "map" : "farm";
        std::string name;
        for (const auto& [key, text] : spec.settings)
            if (key == "name") name = text;
        const std::string place = at + " (" + kind + (name.empty() ? "" : " " + name) + ")";
        const Location where{place};
        if (!pattern_at_[id].empty())
            throw LocatedError(where, "this " + kind + " is already at " + pattern_at_[id] + ": make one for each place");
        pattern_at_[id] = at;
        PatternConfig f;
        f.map = spec.map;
        f.where = where;
        for (const auto& [key, text] : spec.settings) {
            if (key == "worker")
                throw LocatedError(where, "the stages each worker runs are given with worker()" +
                                              std::string(spec.map ? "" : " or worker_pipeline()"));
            set_pattern_key(f, key, text, where);
        }
        if (!spec.worker_given)
            throw LocatedError(where, kind + " has no worker: give the stages each worker runs with worker()" +
                                          std::string(spec.map ? "" : " or worker_pipeline()"));
        f.worker_pipeline = spec.worker_pipeline;
        std::vector<NodeConfig> chain;
        for (size_t j = 0; j < spec.worker.size(); ++j) {
            const std::string wat = place + ".worker[" + std::to_string(j) + "]";
            mine(spec.worker[j], wat);
            if (!s_.nodes.at(spec.worker[j].id).outs.empty())
                throw LocatedError(Location{wat}, "out() inside a " + kind + "'s worker chain: each worker runs its chain "
                                                  "in order; wire the " + kind + "'s next node instead");
            chain.push_back(node(spec.worker[j].id, wat));
        }
        add_pipeline_pattern(app, std::move(f), std::move(chain));
    }

    const AppBuilderState& s_;
    std::vector<std::string> node_at_;     // where each node stands, "" = nowhere yet
    std::vector<std::string> pattern_at_;
};

}  // namespace

AppConfig AppBuilderState::assemble() const { return Assembly(*this).run(); }

}  // namespace tp
