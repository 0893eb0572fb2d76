// Wiring: how an app's pipeline elements connect (framework/model/wiring.hpp).
//
//   - stage: classify
//     name: cls
//     next:                       # each output of the node to a node (farm, map) by name
//       web: websink              #   output: NODE
//       dns: {to: dnssink, queue: 256, transport: sm}   # with this edge's own link settings
//       default: drop
//   - stage: parse
//     next: cls                   # a node with one output may name just the node
//
// A node without `next:` flows through its one output into the next list item, so an app
// without any `next:` is the linear chain it always was. Refused, each at its place with what
// is valid: an output the stage lacks, an output wired twice (copy with a `tee`), an output left
// unwired, `next:` on a sink, a target that is no node, a source fed, a node nothing feeds, a
// cycle (printed), a farm without emitter fed other than by one single-output node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"

namespace tp {

// `next:` as written in `file` (a node name, or a mapping of outputs).
std::vector<NextEdge> read_next(const YAML::Node& v, const std::string& file);

// True when any element has `next:`.
bool app_branches(const AppConfig& app);

// The name of pipeline element `k` (its node's or its farm's / map's).
const std::string& element_name(const AppConfig& app, size_t k);
// Its outputs: its stage's (parameters bound), `out` for a farm or map, none where it ends in sinks.
std::vector<OutputSpec> element_outputs(const AppConfig& app, size_t k);

// Resolves AppConfig::edges and ::order from the elements' `next:` (parameters bound).
void wire_app(AppConfig& app);

}  // namespace tp
