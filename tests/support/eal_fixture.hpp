// Test support: EAL for a test process (no hugepages needed, several test processes at once),
// and paths to the source tree and the shared captures.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "framework/eal/eal_session.hpp"

namespace tp::test {

class EalEnvironment : public testing::Environment {
public:
    void SetUp() override {
        EalOptions o;
        o.memory_bytes = 512ull << 20;
        o.user_args = "--no-huge";  // tests must not depend on the host's hugepages
        eal_start(o);
    }
};

inline std::string source_root() {
    const char* r = std::getenv("TILEPIPE_SOURCE_ROOT");
    return r != nullptr ? r : ".";
}

inline std::string pcaps_dir() {
    const char* r = std::getenv("TILEPIPE_PCAPS");
    return r != nullptr ? r : source_root() + "/../shared/pcaps";
}

}  // namespace tp::test
