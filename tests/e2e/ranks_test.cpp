// Apps across processes: `mpirun -np R tilepipe run APP` with nodes and farm workers on ranks
// (README "Across hosts: ranks on Open MPI"). Small runs: a few thousand packets each.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/support/cli.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

std::string faulty_bin() {
    const char* b = std::getenv("TILEPIPE_FAULTY_BIN");
    return b != nullptr ? b : "tilepipe_faulty";
}

bool have_mpirun() { return run_command("command -v mpirun").status == 0; }

#define REQUIRE_MPIRUN() \
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: apt-get install openmpi-bin)"

// `mpirun -np NP BIN ARGS` from the source root; as root mpirun wants --allow-run-as-root.
std::string mpirun_command(int np, const std::string& bin, const std::string& args) {
    return "cd '" + source_root() + "' && mpirun -np " + std::to_string(np) + " --oversubscribe" +
           (geteuid() == 0 ? " --allow-run-as-root" : "") + " '" + bin + "' " + args;
}

CommandResult mpirun(int np, const std::string& args, const std::string& bin = tilepipe_bin()) {
    return run_command(mpirun_command(np, bin, args));
}

// The merged report rank 0 writes with --json.
nlohmann::json mpirun_json(int np, const std::string& args, CommandResult* out = nullptr,
                           const std::string& bin = tilepipe_bin()) {
    const std::string json = tmp_path("ranks.json");
    const CommandResult r = mpirun(np, "run " + args + " --quiet --json " + json, bin);
    if (out != nullptr) *out = r;
    nlohmann::json j = nlohmann::json::parse(read_file(json), nullptr, false);
    fs::remove(json);
    return j;
}

// Every link between ranks delivered what it was handed, byte for byte.
void expect_links_whole(const nlohmann::json& j, size_t links) {
    ASSERT_EQ(j["rank_links"].size(), links);
    for (const auto& l : j["rank_links"]) {
        EXPECT_EQ(l["sent"], l["received"]) << l.dump();
        EXPECT_EQ(l["sent_bytes"], l["received_bytes"]) << l.dump();
    }
}

std::string farm_app(const std::string& source, const std::string& collect, const std::string& sink) {
    return "app: ranks_farm_test\n"
           "pipeline:\n" +
           source +
           "  - farm:\n"
           "      name: fw\n"
           "      workers: 4\n"
           "      collect: " + collect + "\n"
           "      ranks: [1, 2]\n"
           "      worker:\n"
           "        - stage: parse\n"
           "        - stage: pass\n" +
           sink;
}

// The ordered farm's workers on ranks 1 and 2 hand back every packet in the capture's order,
// its bytes, lengths and capture times intact: pcap_out writes the very file one process does.
// Both kinds of link: lent (the default on one host; the workers' rank copies what rank 0 lent
// it into its own pool to lend it back) and messages (as between hosts).
class RanksBothLinks : public testing::TestWithParam<const char*> {};

TEST_P(RanksBothLinks, OrderedFarmAcrossThreeRanksWritesTheCaptureAsOneProcessDoes) {
    REQUIRE_MPIRUN();
    const std::string cap = pcaps_dir() + "/pcpp__example.pcap";
    const std::string across = tmp_path("across.pcap"), alone = tmp_path("alone.pcap");
    const std::string conf = app_file("ordered.yaml", farm_app("  - stage: pcap\n    file: " + cap + "\n", "ordered",
                                                                 "  - stage: pcap_out\n    file: " + across + "\n"));
    CommandResult r;
    const nlohmann::json j = mpirun_json(3, conf + " --set runtime.rank_links=" + GetParam(), &r);
    ASSERT_EQ(r.status, 0) << r.err;
    expect_exact(j);
    EXPECT_EQ(j["delivered"].get<long>(), tcpdump_view(cap).packets);
    ASSERT_EQ(j["ranks"].size(), 3u);
    for (const auto& rank : j["ranks"]) EXPECT_TRUE(rank["pools_full"].get<bool>()) << rank.dump();
    expect_links_whole(j, 8);  // emitter -> 4 workers, 4 workers -> collector
    const std::string kind = GetParam() == std::string("auto") ? "lent" : "messages";  // one host: auto lends
    for (const auto& l : j["rank_links"]) EXPECT_EQ(l["kind"], kind) << l.dump();
    const std::string identity = app_file("identity.yaml", "pipeline:\n  - stage: pcap\n    file: " + cap +
                                                               "\n  - stage: pcap_out\n    file: " + alone + "\n");
    expect_exact(run_json("run " + identity));
    EXPECT_TRUE(read_file(alone) == read_file(across)) << "the output differs from one process's";
    fs::remove(across), fs::remove(alone), fs::remove(conf), fs::remove(identity);
}

INSTANTIATE_TEST_SUITE_P(Links, RanksBothLinks, testing::Values("auto", "messages"),
                         [](const testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

TEST(Ranks, UnorderedFarmAcrossTwoRanksDeliversEveryPacket) {
    REQUIRE_MPIRUN();
    const std::string conf = app_file(
        "unordered.yaml", "app: ranks_unordered\n"
                          "pipeline:\n"
                          "  - stage: synth\n    count: 20000\n    flows: 256\n    size: imix\n"
                          "  - farm:\n      workers: 3\n      dispatch: round_robin\n      ranks: [0, 1]\n"
                          "      worker: [stage: parse, stage: pass]\n"
                          "  - stage: drop\n");
    CommandResult r;
    const nlohmann::json j = mpirun_json(2, conf, &r);
    ASSERT_EQ(r.status, 0) << r.err;
    expect_exact(j);
    EXPECT_EQ(j["delivered"], 20000);
    // Workers 0 and 2 on rank 0, worker 1 on rank 1: two links cross, one each way.
    expect_links_whole(j, 2);
    // Every rank builds one graph whatever its host's CPUs: `fuse: auto` folds nothing.
    bool emitter = false;
    for (const auto& t : j["tiles"]) emitter = emitter || t["node"] == "farm.emitter";
    EXPECT_TRUE(emitter) << "the farm keeps its emitter tile";
    EXPECT_GT(j["rank_links"][0]["sent"].get<long>(), 0);
    fs::remove(conf);
}

// A pipeline with a stage on each rank; the sink's rank is a --set away (as a benchmark moves it).
TEST(Ranks, PipelineWithAStageOnEachRankDeliversAtTheLastRank) {
    REQUIRE_MPIRUN();
    const std::string conf = app_file("pipeline.yaml", "app: ranks_pipeline\n"
                                                       "pipeline:\n"
                                                       "  - stage: synth\n    count: 5000\n    size: 1500\n"
                                                       "  - stage: parse\n    rank: 1\n"
                                                       "  - stage: drop\n");
    CommandResult r;
    const nlohmann::json j = mpirun_json(3, conf + " --set drop.rank=2 --latency all", &r);
    ASSERT_EQ(r.status, 0) << r.err;
    expect_exact(j);
    EXPECT_EQ(j["delivered"], 5000);
    // Every packet's latency, taken at the sink on rank 2 from stamps made on rank 0, reaches
    // rank 0's report: a stamp carried as a raw TSC would be another host's meaningless number.
    const nlohmann::json& lat = j["latency_us"];
    EXPECT_EQ(lat["samples"], 5000) << lat.dump();
    EXPECT_GT(lat["p50"].get<double>(), 0.0) << lat.dump();
    EXPECT_LT(lat["p50"].get<double>(), 10e6) << lat.dump();
    EXPECT_LE(lat["p99"].get<double>(), lat["max"].get<double>()) << lat.dump();
    // The nodes on ranks 1 and 2 too (latency: all); the queue wait of `parse`, the first node
    // after a link, counts from when the link's end handed the packet on (a run of a few
    // milliseconds: under a second even on a loaded machine), not from a stamp its mbuf never had.
    for (const auto& t : j["tiles"])
        if (t["node"] == "parse" || t["node"] == "drop") {
            ASSERT_TRUE(t.contains("queue_wait_us")) << t.dump();
            EXPECT_LT(t["queue_wait_us"]["p99"].get<double>(), 1e6) << t.dump();
        }
    // A rank with no source times its nodes over its own traffic: rank 2, a link's end and a
    // sink, reports them busy, as a rank with a stage between them does.
    for (const auto& t : j["tiles"])
        if (t["packets"].get<uint64_t>() > 0 || t["node"] == "drop") EXPECT_GT(t["busy_fraction"].get<double>(), 0.0) << t.dump();
    EXPECT_EQ(j["ranks"][0]["packets"], 5000);
    EXPECT_EQ(j["ranks"][2]["delivered"], 5000);
    expect_links_whole(j, 2);
    EXPECT_EQ(j["rank_links"][0]["sent_bytes"], 5000 * 1500);
    EXPECT_GT(j["seconds"].get<double>(), 0.0);
    // The table names every rank and link.
    const CommandResult table = mpirun(3, "run " + conf + " --quiet --set drop.rank=2");
    EXPECT_NE(table.out.find("ranks:"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("parse (rank 1) -> drop (rank 2)"), std::string::npos) << table.out;
    fs::remove(conf);
}

// A stage that throws on rank 1 fails its node; the other rank stops its sources, every link
// drains and rank 0 reports the failure with its rank, every packet accounted for.
TEST(Ranks, AStageThatThrowsOnRankOneStopsEveryRankWithAnExactReport) {
    REQUIRE_MPIRUN();
    const std::string conf = app_file("throws.yaml", "app: ranks_throws\n"
                                                     "pipeline:\n"
                                                     "  - stage: synth\n    count: 2M\n"
                                                     "  - stage: throw_after\n    packets: 3000\n    message: boom on purpose\n    rank: 1\n"
                                                     "  - stage: drop\n");
    CommandResult r;
    const nlohmann::json j = mpirun_json(2, conf, &r, faulty_bin());
    EXPECT_EQ(r.status, 1) << r.err;
    ASSERT_FALSE(j.is_discarded()) << r.err;
    EXPECT_EQ(j["unaccounted"], 0);
    EXPECT_TRUE(j["pools_full"].get<bool>());
    EXPECT_LT(j["packets"].get<long>(), 2000000) << "rank 0's source stopped";
    EXPECT_NE(r.err.find("failed: rank 1: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("boom on purpose"), std::string::npos) << r.err;
    // A stage that cannot open on rank 1: no rank runs, and rank 0 says which rank and why.
    const CommandResult open = mpirun(2, "run " + conf + " --quiet --set throw_after.in_open=true", faulty_bin());
    EXPECT_EQ(open.status, 1) << open.err;
    EXPECT_NE(open.err.find("tilepipe: rank 1: "), std::string::npos) << open.err;
    EXPECT_NE(open.err.find("boom on purpose"), std::string::npos) << open.err;
    fs::remove(conf);
}

// Lending pools larger than the host's /dev/shm can hold: every rank stops before the run, each
// saying why (not one rank alone, leaving the others in a collective call), and points to the
// setting that needs no shared memory.
TEST(Ranks, SharedMemoryTheHostCannotHoldStopsEveryRankSayingSo) {
    REQUIRE_MPIRUN();
    const CommandResult r = mpirun(2, "run conf/bench/forward_synth.yaml --quiet --set drop.rank=1 --set pool.mbufs=67108863");
    EXPECT_EQ(r.status, 1) << r.err;
    for (const char* rank : {"tilepipe: rank 0: memory shared between ranks: ", "tilepipe: rank 1: memory shared between ranks: "})
        EXPECT_NE(r.err.find(rank), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("runtime.rank_links: messages needs no shared memory"), std::string::npos) << r.err;
}

TEST(Ranks, RanksTheRunCannotHaveAreRefusedAtTheirPlace) {
    REQUIRE_MPIRUN();
    const std::string conf = app_file("rank2.yaml", "app: ranks_bad\n"
                                                    "pipeline:\n"
                                                    "  - stage: synth\n    count: 100\n"
                                                    "  - stage: drop\n    rank: 2\n");
    // Every rank finds it; rank 0 says it, once (the other cases: rank_plan_test).
    CommandResult r = mpirun(2, "run " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(conf + ":6:11: rank 2 does not exist: mpirun started 2 process(es)"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("rank 2 does not exist", r.err.find("rank 2 does not exist") + 1), std::string::npos)
        << "rank 0 alone says it: " << r.err;
    // A capture only rank 1 reads, which its host lacks: rank 1 says so, naming itself and the file.
    const std::string lacking = app_file("lacking.yaml", "pipeline:\n"
                                                         "  - stage: pcap\n    file: /nonexistent/ranks.pcap\n    rank: 1\n"
                                                         "  - stage: drop\n");
    r = mpirun(2, "run " + lacking);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("tilepipe: rank 1: " + lacking + ":3:11: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("/nonexistent/ranks.pcap"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("rank 0:"), std::string::npos) << "rank 0 reads no capture: " << r.err;
    fs::remove(lacking);
    // Without mpirun an app is one process.
    r = tilepipe("run " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(conf + ":6:11: rank 2 needs mpirun"), std::string::npos) << r.err;
    fs::remove(conf);
}

// A worker's chain runs on one rank: a rank on one of its stages is refused (validate says so too).
TEST(Ranks, ARankInsideAFarmsWorkerChainIsRefused) {
    const std::string conf = app_file("worker.yaml", "pipeline:\n"
                                                     "  - stage: synth\n"
                                                     "  - farm:\n      worker:\n        - stage: parse\n          rank: 1\n"
                                                     "  - stage: drop\n");
    const CommandResult r = tilepipe("validate " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(conf + ":6:17: 'parse' is a stage of farm 'farm''s workers, whose chain stays on one rank"),
              std::string::npos) << r.err;
    fs::remove(conf);
}

// Ctrl-C to mpirun: Open MPI 4.1's mpirun turns it into SIGTERM to every rank (and SIGKILL a
// second later); each rank stops its sources and drains, and rank 0 writes one exact report.
TEST(Ranks, SigintToMpirunDrainsEveryRankIntoOneExactReport) {
    REQUIRE_MPIRUN();
    const std::string out = tmp_path("sigint.pcap");
    const std::string conf = app_file("sigint.yaml", "app: ranks_sigint\n"
                                                     "pipeline:\n"
                                                     "  - stage: synth\n    count: 0\n    duration: 60\n    pps: 20000\n"
                                                     "  - stage: parse\n    rank: 1\n"
                                                     "  - stage: pcap_out\n    file: " + out + "\n");
    const std::string json = tmp_path("sigint.json"), err = tmp_path("sigint.err");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The shell becomes mpirun (exec), so the signal reaches mpirun itself.
        std::string cmd = mpirun_command(2, tilepipe_bin(), "run " + conf + " --quiet --json " + json) + " >/dev/null 2>" + err;
        cmd.replace(cmd.find("&& mpirun"), 9, "&& exec mpirun");
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    // Until packets reach the sink: its file takes its name once the app started, then grows.
    std::error_code ec;
    for (int i = 0; i < 600 && !(fs::exists(out, ec) && fs::file_size(out, ec) > 24 + 100 * 64); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    const nlohmann::json j = nlohmann::json::parse(read_file(json), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << read_file(err);
    expect_exact(j);
    EXPECT_TRUE(j["header"]["interrupted"].get<bool>());
    EXPECT_GT(j["delivered"].get<long>(), 0);
    EXPECT_LT(j["delivered"].get<long>(), 20000 * 60);
    EXPECT_NE(read_file(err).find("tilepipe: interrupted by SIGTERM"), std::string::npos) << read_file(err);
    fs::remove(json), fs::remove(err), fs::remove(conf), fs::remove(out);
}

}  // namespace
}  // namespace tp::test
