// Test support: a stage's parameters as a config file would give them — each given key on a
// line of its own in "app.yaml" (line 2 on, column 5), the node at 1:3, every default filled —
// so a test can assert the place an error names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "framework/stage/registry.hpp"

namespace tp::test {

using Given = std::vector<std::pair<std::string, std::string>>;

inline ParamValues stage_params(const std::string& stage, const Given& given) {
    const StageInfo* info = StageRegistry::instance().find(stage);
    ParamValues p;
    p.set_node_location(Location{"app.yaml", 1, 3});
    int line = 2;
    for (const auto& [key, value] : given) p.set(*info->find_param(key), value, Location{"app.yaml", line++, 5});
    for (const ParamSpec& spec : info->params) p.set_default(spec);
    return p;
}

}  // namespace tp::test
