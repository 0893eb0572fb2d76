#include "framework/config/link_settings.hpp"

#include <string>

#include "framework/config/app_config.hpp"

namespace tp {

namespace {

// Why node `i` has no link of its own, and which setting to give instead; empty when it has one.
std::string no_link_of(const AppConfig& app, size_t i) {
    const NodeConfig& n = app.pipeline[i];
    if (n.stage->kind == StageKind::Source) return "'" + n.name + "' is a source: no link leads into it";
    if (n.pattern < 0) return {};
    const PatternConfig& f = app.patterns[static_cast<size_t>(n.pattern)];
    if (f.map)
        return "'" + n.name + "' runs in the workers of map '" + f.name +
               "', whose links carry task references: give it on the map";
    if (f.worker_pipeline || i == f.first) return {};
    return "'" + n.name + "' is not the first stage of the worker chain of farm '" + f.name +
           "', which runs as one node: its link from the farm's emitter takes the first stage's (give it on '" +
           app.pipeline[f.first].name + "') or the farm's";
}

}  // namespace

void check_link_settings(const AppConfig& app) {
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        const NodeConfig& n = app.pipeline[i];
        if (n.transport.empty() && n.queue == 0) continue;
        const std::string why = no_link_of(app, i);
        if (why.empty()) continue;
        const bool transport = !n.transport.empty();
        throw LocatedError(transport ? n.transport_where : n.queue_where,
                           std::string(transport ? "transport" : "queue") + " sets the link into a node, and " + why);
    }
}

}  // namespace tp
