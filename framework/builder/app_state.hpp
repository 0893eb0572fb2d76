// What an AppBuilder (include/tilepipe/app.hpp) holds: the program's calls as YAML-style text,
// assembled into an AppConfig only when validated or run, so every error can name the place
// the pipeline gives a node.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "framework/config/app_config.hpp"
#include "tilepipe/app.hpp"

namespace tp {

struct AppBuilderState {
    using Settings = std::vector<std::pair<std::string, std::string>>;  // key, text; in call order
    // A node or pattern, with the builder that made it (a handle of another app is refused).
    struct Ref {
        const AppBuilderState* owner = nullptr;
        size_t id = 0;
    };
    struct Step;
    struct NodeSpec {
        std::string stage;
        Settings settings;  // `name`, `transport`, `queue`, `tile` and parameters
        // out(): output name and the element it feeds (Step: kind and ref), in call order.
        std::vector<std::pair<std::string, std::pair<int, Ref>>> outs;
    };
    struct PatternSpec {
        bool map = false;
        Settings settings;
        std::vector<Ref> worker;
        bool worker_given = false;
        bool worker_pipeline = false;
        std::vector<std::pair<int, Ref>> outs;  // out(): the elements its output feeds
    };
    struct Step {
        enum Kind { Node, Pattern } kind = Node;
        Ref ref;
    };

    std::string name;
    Settings settings;  // app-wide
    std::vector<std::string> plugins;
    std::vector<NodeSpec> nodes;
    std::vector<PatternSpec> patterns;
    std::vector<Step> pipeline;

    void set_worker(size_t pattern, const std::vector<tp::Node>& chain, bool own_tiles);
    void add_out(size_t node, const std::string& output, const Element& to);
    void add_pattern_out(size_t pattern, const Element& to);
    // The app as an AppConfig, checked as a loaded file is (complete_app); LocatedError at the
    // place of the first problem.
    AppConfig assemble() const;
};

AppError to_app_error(const LocatedError& e);

}  // namespace tp
