// Test support: EAL for a test process (no hugepages needed, several test processes at once),
// and paths to the source tree and the shared captures.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

// The shared captures (every .pcap and .pcapng in pcaps_dir()), sorted: their file names, or
// their paths.
inline std::vector<std::string> shared_capture_names() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(pcaps_dir(), ec)) {
        const std::string n = e.path().filename().string();
        if (n.ends_with(".pcap") || n.ends_with(".pcapng")) names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
}
inline std::vector<std::string> shared_capture_paths() {
    std::vector<std::string> paths;
    for (const std::string& n : shared_capture_names()) paths.push_back(pcaps_dir() + "/" + n);
    return paths;
}

}  // namespace tp::test
