#include "framework/config/plugins_key.hpp"

#include <filesystem>

#include "framework/config/yaml_location.hpp"
#include "framework/plugin/plugin_loader.hpp"

namespace tp {

void load_config_plugins(const YAML::Node& value, const std::string& file) {
    const auto load_one = [&file](const YAML::Node& n) {
        const Location where = yaml_location(file, n.Mark());
        if (!n.IsScalar() || n.Scalar().empty())
            throw LocatedError(where, "a plugin is the path of a shared library (plugins: [lib/libx.so])");
        std::filesystem::path path = n.Scalar();
        const std::filesystem::path dir = std::filesystem::path(file).parent_path();
        if (path.is_relative() && !dir.empty()) path = (dir / path).lexically_normal();
        load_plugin(path.string(), where);
    };
    if (value.IsSequence()) {
        for (const YAML::Node& n : value) load_one(n);
    } else if (value.IsScalar()) {
        load_one(value);
    } else {
        throw LocatedError(yaml_location(file, value.Mark()), "'plugins' is a list of shared libraries (plugins: [lib/libx.so])");
    }
}

}  // namespace tp
