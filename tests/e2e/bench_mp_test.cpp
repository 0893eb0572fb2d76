// The message-passing benches as a user reads them (mp-pingpong's --backend, mp-shift's
// sweeps and fit, --sizes, hybrid --runs), and the FastFlow study's ff-grain, ff-matmul and ff-homing.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

TEST(BenchMp, ShiftSweepsSizesAndBuffersAndFitsTheModel) {
    const std::string json = tmp_path("shift.json");
    const CommandResult r =
        tilepipe("bench mp-shift --backend tiles --ranks 2 --sizes 256,2048 --buffers 256,1008 --reps 5 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    ASSERT_EQ(j["rows"].size(), 8u);  // 2 grids x 2 sizes x 2 buffers
    std::set<size_t> pieces;
    for (const auto& row : j["rows"]) pieces.insert(row["pieces"].get<size_t>());
    EXPECT_EQ(pieces, (std::set<size_t>{1, 3, 8}));  // 2048 B in 256-byte and 1008-byte pieces
    ASSERT_EQ(j["fit"].size(), 2u);                  // tiles 1d, tiles 2d
    for (const auto& f : j["fit"]) EXPECT_FALSE(f["alpha1_us"].is_null()) << f.dump();
    EXPECT_NE(r.out.find("alpha1"), std::string::npos) << r.out;
    fs::remove(json);
    const CommandResult bad = tilepipe("bench mp-shift --backend tiles --buffers 100");
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--buffers: 100 is below 256 bytes"), std::string::npos) << bad.err;
}

TEST(BenchMp, SizesSweepAKernelARowPerSize) {
    const std::string json = tmp_path("sizes.json");
    const CommandResult r =
        tilepipe("bench mp-stencil --backend tiles --ranks 2 --sizes 16,32 --iters 2 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    ASSERT_EQ(j["rows"].size(), 2u);
    EXPECT_EQ(j["rows"][1]["size"], 32);
    EXPECT_TRUE(j["rows"][1]["verified"].get<bool>());
    EXPECT_EQ(j["style"], "study");
    fs::remove(json);
    const CommandResult bad = tilepipe("bench mp-fft --backend tiles --ranks 2 --sizes 16,48");
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--size 48 on 2 ranks: the size must be a power of two"), std::string::npos) << bad.err;
}

TEST(BenchMp, HybridRanksRepeatedReportTheirSpread) {
    const std::string json = tmp_path("hybrid.json");
    const CommandResult r =
        tilepipe("bench mp-stencil --ranks 2 --tiles-per-rank 2 --size 16 --iters 2 --runs 3 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["runs"].size(), 3u);
    EXPECT_EQ(j["tiles_per_rank"], 2);
    EXPECT_TRUE(j["runs"][2]["verified"].get<bool>());
    EXPECT_LE(j["gflops"]["min"].get<double>(), j["gflops"]["median"].get<double>());
    EXPECT_NE(r.out.find("3 runs: GFLOPS median"), std::string::npos) << r.out;
    fs::remove(json);
    const CommandResult bad = tilepipe("bench mp-stencil --backend mpi --tiles-per-rank 2");
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--tiles-per-rank is the tiles backend's"), std::string::npos) << bad.err;
}

// The FastFlow study's Figs. 6 and 9 on the accelerator: a `scaling` report a row per
// (grain or M, workers), and bad counts refused.
TEST(BenchFf, GrainAndMatmulWriteScalingReports) {
    const std::string json = tmp_path("ff.json");
    CommandResult r = tilepipe("bench ff-grain --grain-us 10,100 --workers 1,2 --work-ms 2 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["bench"], "scaling");
    EXPECT_EQ(j["rows"].size(), 4u);
    EXPECT_GT(j["rows"][3]["speedup"].get<double>(), 0);
    r = tilepipe("bench ff-matmul --m 8,16 --workers 2 --tasks 10 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    j = nlohmann::json::parse(read_file(json));
    ASSERT_EQ(j["rows"].size(), 2u);
    EXPECT_EQ(j["rows"][1]["m"], 16);
    EXPECT_GT(j["rows"][1]["gflops"].get<double>(), 0);
    fs::remove(json);
    const CommandResult bad = tilepipe("bench ff-matmul --m 0");
    EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--m: '0' is not a positive count"), std::string::npos) << bad.err;
}

// Fig. 7: a row per (policy, M, workers) the host honours, each product checked, drawn by
// `tilepipe plot`, and bad policies and counts refused naming the flag.
TEST(BenchFf, HomingWritesAScalingReportPerPolicy) {
    const std::string json = tmp_path("homing.json");
    const CommandResult r = tilepipe("bench ff-homing --m 8 --workers 1,2 --tasks 6 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    const std::string png = tmp_path("homing.png");
    const CommandResult drawn = tilepipe("plot " + json + " -o " + png);  // the figure, a line per policy and M
    EXPECT_EQ(drawn.status, 0) << drawn.err;
    EXPECT_EQ(drawn.out.rfind(png + ": scaling", 0), 0u) << drawn.out;
    fs::remove(json);
    fs::remove(png);
    EXPECT_EQ(j["bench"], "scaling");
    EXPECT_EQ(j["x"], "workers");
    EXPECT_EQ(j["y"], "gflops");
    EXPECT_GE(j["numa_nodes"].get<int>(), 1);
    // local is skipped only where a floating worker's node is ambiguous (several nodes).
    ASSERT_EQ(j["rows"].size() + j["skipped"].size(), 6u) << j.dump(1);
    std::vector<std::string> seen;
    for (const auto& row : j["rows"]) {
        seen.push_back(row["policy"].get<std::string>() + "/" + std::to_string(row["workers"].get<int>()));
        EXPECT_EQ(row["m"], 8);
        EXPECT_EQ(row["tasks"], 6);
        EXPECT_GT(row["gflops"].get<double>(), 0);
        EXPECT_EQ(row["series"], row["policy"].get<std::string>() + ", M=8");
        EXPECT_EQ(row["placement"].get<std::string>().rfind(row["policy"].get<std::string>(), 0), 0u) << row.dump();
    }
    EXPECT_EQ(seen.front(), "first_touch/1");
    EXPECT_EQ(seen.back(), "interleave/2");
    for (const auto& [args, flag] : std::vector<std::pair<std::string, std::string>>{
             {"--policies local,hash", "--policies: 'hash' is not a memory policy (known: local, interleave, first_touch)"},
             {"--tasks 0", "--tasks"},
             {"--m 5000", "--m: 5000 is above 4096"},
             {"--workers 0", "--workers: '0' is not a positive count"}}) {
        const CommandResult bad = tilepipe("bench ff-homing " + args);
        EXPECT_EQ(bad.status, 2) << args << ": " << bad.out << bad.err;
        EXPECT_NE(bad.err.find(flag), std::string::npos) << args << ": " << bad.err;
    }
}

}  // namespace
}  // namespace tp::test
