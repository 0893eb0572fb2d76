// Where a node's `transport:` and `queue:` take effect: they set the link into the node, so
// they are refused where the node has no link of its own rather than silently ignored.
//
//   - a source: nothing leads into it;
//   - a stage of a farm's worker chain after the first: the chain runs as one node, whose
//     link from the emitter (or the dispatching node) the first stage's setting sets;
//   - a stage of a map's workers: the map's links carry task references, set on the map.
//
// A worker pipeline's stages are nodes of their own: each takes its link's setting.
#pragma once

namespace tp {

struct AppConfig;

// Throws LocatedError at the first `transport` or `queue` given where no link takes it,
// naming the setting that does.
void check_link_settings(const AppConfig& app);

}  // namespace tp
