// The app config's `plugins:` key: the plugin libraries an app's stages come from, loaded
// while the config is read, before its pipeline's stages are looked up.
//
//   plugins: [lib/libmark_stage.so]     # relative to the config's folder
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace tp {

// Loads each plugin `value` (a list of paths, or one path) names; a relative path is found
// beside `file`. Errors point at the entry in `file` (framework/plugin/plugin_loader.hpp).
void load_config_plugins(const YAML::Node& value, const std::string& file);

}  // namespace tp
