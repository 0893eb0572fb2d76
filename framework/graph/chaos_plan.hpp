// Where the app's `chaos:` setting applies: the graph node it names.
#pragma once

#include <cstddef>
#include <optional>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_graph.hpp"

namespace tp {

// The graph node `chaos.stall` names (none when it is empty). Throws LocatedError at the
// setting when no node has that name, listing the names, or when it names a map's node.
std::optional<size_t> chaos_stall_node(const AppConfig& app, const AppGraph& g);

}  // namespace tp
