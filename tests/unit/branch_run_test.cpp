// Branching apps running: each packet reaches the sink of the branch it took, joins deliver
// all their inputs, a tee's copies are counted as packets, and the runtime's guarantees (every
// packet delivered or a counted drop, pools full at the end, a stop drains every branch) hold
// on every branch.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <string>
#include <thread>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/runtime/stop_request.hpp"
#include "tests/support/app_run.hpp"

namespace tp {
namespace {

std::string source_root() {
    const char* root = std::getenv("TILEPIPE_SOURCE_ROOT");
    return root != nullptr ? root : ".";
}

using test::expect_accounted;
using test::run_yaml;

uint64_t out_of(const RunReport& r, const std::string& name) {
    for (const StageReport& s : r.stages)
        if (s.name == name) return s.out;
    ADD_FAILURE() << "no stage " << name;
    return 0;
}

// synth's `proto: mix` alternates UDP and TCP flows, emitted round-robin: half and half exactly.
const std::string kMix = "pipeline:\n  - stage: synth\n    proto: mix\n    count: 100000\n  - parse\n";

TEST(BranchRun, EachPacketReachesTheSinkOfTheOutputItsClassifierChose) {
    for (const char* queue : {"1024", "4"}) {  // tiny queues: back-pressure on every branch
        const RunReport r = run_yaml(std::string("queue: ") + queue + "\n" + kMix +
                                     "  - stage: classify\n    matches: \"tcp: proto=tcp\"\n    next: {tcp: tcps, default: udps}\n"
                                     "  - stage: drop\n    name: tcps\n  - stage: drop\n    name: udps\n");
        EXPECT_EQ(out_of(r, "tcps"), 50000u) << queue;
        EXPECT_EQ(out_of(r, "udps"), 50000u) << queue;
        EXPECT_EQ(r.delivered, 100000u);
        expect_accounted(r);
    }
}

TEST(BranchRun, TheReportCountsEachEdgeAndItsShareUnderItsNode) {
    const RunReport r = run_yaml(kMix + "  - stage: classify\n    name: cls\n    matches: \"tcp: proto=tcp\"\n"
                                        "    next: {tcp: tcps, default: udps}\n"
                                        "  - stage: drop\n    name: tcps\n  - stage: drop\n    name: udps\n");
    std::map<std::string, EdgeReport> by;
    for (const EdgeReport& e : r.edges) by[e.from + "." + e.output + " -> " + e.to] = e;
    ASSERT_EQ(by.count("cls.tcp -> tcps"), 1u);
    EXPECT_EQ(by["cls.tcp -> tcps"].packets, 50000u);
    EXPECT_EQ(by["cls.tcp -> tcps"].bytes, 50000u * 64);
    EXPECT_DOUBLE_EQ(by["cls.tcp -> tcps"].share, 0.5);
    EXPECT_EQ(by["cls.default -> udps"].packets, 50000u);
    EXPECT_EQ(by["parse.out -> cls"].packets, 100000u);
    EXPECT_DOUBLE_EQ(by["parse.out -> cls"].share, 1.0);
    const std::string table = format_table(r);
    EXPECT_NE(table.find("cls.tcp -> tcps: 50000 packets, 3200000 bytes, 50%"), std::string::npos) << table;
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["edges"].size(), r.edges.size());
}

TEST(BranchRun, AFilterExpressionSplitsAsTheFieldMatchDoes) {
    const RunReport r = run_yaml(kMix + "  - stage: classify\n    matches: \"u: udp; t: tcp\"\n    next: {u: us, t: ts, default: rest}\n"
                                        "  - stage: drop\n    name: us\n  - stage: drop\n    name: ts\n  - stage: drop\n    name: rest\n");
    EXPECT_EQ(out_of(r, "us"), 50000u);
    EXPECT_EQ(out_of(r, "ts"), 50000u);
    EXPECT_EQ(out_of(r, "rest"), 0u);
    expect_accounted(r);
}

TEST(BranchRun, AJoinDeliversEveryInputAndAFarmRunsOnABranch) {
    const RunReport r = run_yaml(kMix + "  - stage: classify\n    matches: \"tcp: proto=tcp\"\n    next: {tcp: fw, default: end}\n"
                                        "  - farm:\n      name: fw\n      workers: 2\n      worker: [pass]\n      next: end\n"
                                        "  - stage: drop\n    name: end\n");
    EXPECT_EQ(out_of(r, "end"), 100000u);
    uint64_t workers = 0;
    for (const StageReport& s : r.stages)
        if (s.stage == "pass") workers += s.out;
    EXPECT_EQ(workers, 50000u) << "the farm's workers saw the TCP half";
    expect_accounted(r);
}

TEST(BranchRun, TwoOutputsJoinIntoAMapAndAnOrderedFarmSitsOnABranch) {
    for (const char* fuse : {"never", "always"}) {  // always: emitters and collectors fold where they can
        const RunReport r = run_yaml(std::string("runtime: {fuse: ") + fuse + "}\n" + kMix +
                                     "  - stage: classify\n    matches: \"tcp: proto=tcp\"\n    next: {tcp: m, default: m}\n"
                                     "  - map:\n      name: m\n      workers: 2\n      worker: [pass]\n"
                                     "  - stage: classify\n    name: again\n    matches: \"udp: proto=udp\"\n"
                                     "    next: {udp: fo, default: end}\n"
                                     "  - farm:\n      name: fo\n      workers: 2\n      collect: ordered\n      worker: [pass]\n"
                                     "      next: end\n"
                                     "  - stage: drop\n    name: end\n");
        EXPECT_EQ(out_of(r, "end"), 100000u) << fuse;
        expect_accounted(r);
    }
}

TEST(BranchRun, ATeeSendsEveryPacketAndACopyAndCountsTheCopies) {
    const RunReport r = run_yaml(
        "pipeline:\n  - stage: synth\n    count: 20000\n  - parse\n  - stage: tee\n    next: {out0: a, out1: b}\n"
        "  - stage: drop\n    name: a\n  - stage: lpm_route\n    name: b\n    routes: " +
        source_root() + "/conf/data/routes.txt\n    default_port: 1\n  - stage: drop\n    name: bd\n");
    EXPECT_EQ(out_of(r, "a"), 20000u);
    EXPECT_EQ(out_of(r, "bd"), 20000u);
    EXPECT_EQ(r.copies, 20000u);
    EXPECT_EQ(r.delivered, 40000u);
    expect_accounted(r);
}

TEST(BranchRun, AStopDrainsEveryBranch) {
    AppConfig app = parse_app_config(
        "pipeline:\n  - stage: synth\n    proto: mix\n    count: 0\n  - parse\n"
        "  - stage: classify\n    matches: \"tcp: proto=tcp\"\n    next: {tcp: t, default: tee}\n"
        "  - stage: tee\n    next: {out0: u, out1: t}\n  - stage: drop\n    name: t\n  - stage: drop\n    name: u\n",
        "t.yaml");
    AppRunner runner(app);
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        request_stop();
    });
    const RunReport r = runner.run(RunOptions{});
    stopper.join();
    clear_stop_request();
    EXPECT_GT(out_of(r, "u"), 0u);
    EXPECT_GT(out_of(r, "t"), out_of(r, "u"));
    expect_accounted(r);
}

}  // namespace
}  // namespace tp
