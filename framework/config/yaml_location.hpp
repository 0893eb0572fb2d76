// Where a yaml-cpp node or error stands in its file, as a Location.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "framework/config/location.hpp"

namespace tp {

inline Location yaml_location(const std::string& file, const YAML::Mark& m) {
    // yaml-cpp marks are 0-based; a null mark (-1) means "unknown".
    return Location{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

}  // namespace tp
