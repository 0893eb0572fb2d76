// `tilepipe bench mp-pingpong`'s options as a user reads them: --backend names the one backend
// measured (without it, both), and a backend it does not know is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

// The backends of a pingpong report's rows.
std::set<std::string> backends_of(const std::string& json) {
    std::set<std::string> out;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    for (const auto& row : j["rows"]) out.insert(row["backend"].get<std::string>());
    return out;
}

TEST(BenchMp, PingpongMeasuresOnlyTheBackendNamed) {
    const std::string json = tmp_path("pp.json");
    // The shortest run there is: one round, ten round trips per size.
    const CommandResult r = tilepipe("bench mp-pingpong --backend tiles --rounds 1 --reps 1 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(backends_of(json), std::set<std::string>{"tiles"});
    EXPECT_EQ(r.out.find("mpi us"), std::string::npos) << r.out;
    fs::remove(json);
    const CommandResult bad = tilepipe("bench mp-pingpong --backend shm --rounds 1 --reps 1");
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--backend: 'shm' (known: tiles, mpi)"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tp::test
