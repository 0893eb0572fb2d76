// "a, b, c": the lists config errors name (known keys, outputs, nodes).
#pragma once

#include <string>
#include <vector>

namespace tp {

inline std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

}  // namespace tp
