// Where a yaml-cpp node or error stands in its file, as a Location.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "framework/config/location.hpp"

namespace tp {

inline Location yaml_location(const std::string& file, const YAML::Mark& m) {
    // yaml-cpp marks are 0-based; a null mark (-1) means "unknown".
    return Location{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

// yaml-cpp keeps the last of a key given twice in one mapping without a word; a setting is
// given once, so a second `count:` (or `pipeline:`) is refused where it stands, naming the
// first. Walks every mapping under `root` (with a stack of its own: the depth is the file's)
// but the value of a key named `left_to_reader`, whose reader says more of a repeat (an app's
// `next:`: one output feeds one edge, use a tee).
inline void refuse_repeated_keys(const YAML::Node& root, const std::string& file, const std::string& left_to_reader = "") {
    std::vector<YAML::Node> todo{root};
    // An alias is the anchored node itself: each container is walked once, however often it is
    // aliased (nested aliases would otherwise expand exponentially: "a billion laughs").
    std::set<int> walked;
    while (!todo.empty()) {
        const YAML::Node n = todo.back();
        todo.pop_back();
        if ((n.IsMap() || n.IsSequence()) && !walked.insert(n.Mark().pos).second) continue;
        if (n.IsSequence())
            for (const YAML::Node& item : n) todo.push_back(item);
        if (!n.IsMap()) continue;
        std::map<std::string, YAML::Mark> seen;
        for (auto it = n.begin(); it != n.end(); ++it) {
            const YAML::Node key = it->first;
            if (!key.IsScalar() || key.Scalar() != left_to_reader) todo.push_back(it->second);
            if (!key.IsScalar()) continue;
            const auto [at, fresh] = seen.emplace(key.Scalar(), key.Mark());
            if (!fresh)
                throw LocatedError(yaml_location(file, key.Mark()),
                                   "'" + key.Scalar() + "' is given twice in this mapping (first at line " +
                                       std::to_string(at->second.line + 1) + "): give each key once");
        }
    }
}

}  // namespace tp
