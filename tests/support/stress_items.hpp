// Stress tests: how many items to push, from $TILEPIPE_STRESS_ITEMS when set, else the build's
// default (the meson option `stress_items`). A value that is not a positive decimal number is
// refused with an exception (the test fails naming the variable), never read as 0 or as a
// prefix: a stress run that moves nothing would pass without testing anything.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tp::test {

// `text` as a positive decimal count; throws std::invalid_argument naming `what` otherwise.
inline uint64_t positive_count(const std::string& text, const std::string& what) {
    uint64_t v = 0;
    bool ok = !text.empty() && text.size() <= 19;  // below 10^19: no overflow
    for (char c : text) {
        ok = ok && c >= '0' && c <= '9';
        if (ok) v = v * 10 + uint64_t(c - '0');
    }
    if (!ok || v == 0)
        throw std::invalid_argument(what + "='" + text + "': expected a positive decimal number of items");
    return v;
}

inline uint64_t stress_items(uint64_t build_default) {
    if (const char* env = std::getenv("TILEPIPE_STRESS_ITEMS")) return positive_count(env, "TILEPIPE_STRESS_ITEMS");
    return positive_count(std::to_string(build_default), "the stress_items build option");
}

}  // namespace tp::test
