// Test support: the `tilepipe` binary driven as a user drives it, from the source root.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {

// A path in the temporary directory, distinct per test process.
inline std::string tmp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("tp-e2e-" + std::to_string(getpid()) + "-" + name)).string();
}

inline CommandResult tilepipe(const std::string& args) {
    return run_command("cd '" + source_root() + "' && '" + tilepipe_bin() + "' " + args);
}

// Runs `tilepipe ARGS --quiet --json FILE`, expects exit 0 and returns the report (discarded
// JSON when there is none).
inline nlohmann::json run_json(const std::string& args, CommandResult* out = nullptr) {
    const std::string json = tmp_path("r.json");
    const CommandResult r = tilepipe(args + " --quiet --json " + json);
    if (out != nullptr) *out = r;
    EXPECT_EQ(r.status, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(read_file(json), nullptr, false);
    std::filesystem::remove(json);
    return j;
}

// `tilepipe ARGS` is refused as a usage or config error (exit 2) with exactly `err` on stderr.
inline void expect_refused(const std::string& args, const std::string& err) {
    const CommandResult r = tilepipe(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err, err) << args;
}

// An app config in a temporary file.
inline std::string app_file(const std::string& name, const std::string& yaml) {
    const std::string path = tmp_path(name);
    std::ofstream(path) << yaml;
    return path;
}

// A run's report accounts for every packet: delivered + dropped = packets, pools full again.
inline void expect_exact(const nlohmann::json& j) {
    ASSERT_FALSE(j.is_discarded()) << "no report";
    EXPECT_EQ(j["unaccounted"], 0);
    EXPECT_TRUE(j["pools_full"].get<bool>());
    EXPECT_EQ(j["packets"].get<uint64_t>(), j["delivered"].get<uint64_t>() + j["drops"].get<uint64_t>());
}

// The row of stage `name` in a run report, nullptr when there is none.
inline const nlohmann::json* stage_named(const nlohmann::json& report, const std::string& name) {
    for (const auto& s : report["stages"])
        if (s["name"] == name) return &s;
    return nullptr;
}

}  // namespace tp::test
