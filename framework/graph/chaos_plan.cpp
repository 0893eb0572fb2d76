#include "framework/graph/chaos_plan.hpp"

#include <string>

namespace tp {

std::optional<size_t> chaos_stall_node(const AppConfig& app, const AppGraph& g) {
    if (app.chaos.stall.empty()) return std::nullopt;
    std::string names;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (g.nodes[n].name == app.chaos.stall) {
            if (g.nodes[n].role != NodeRole::Stages)
                throw LocatedError(app.chaos.where, "chaos.stall: '" + app.chaos.stall +
                                                        "' is a node of a map, which cannot be stalled alone");
            return n;
        }
        names += (names.empty() ? "" : ", ") + g.nodes[n].name;
    }
    throw LocatedError(app.chaos.where, "chaos.stall: no node named '" + app.chaos.stall + "' (nodes: " + names + ")");
}

}  // namespace tp
