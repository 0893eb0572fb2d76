// The runtime: every packet a source emits leaves through a sink or a counted drop, end of
// stream reaches every node, and every mempool is full again at the end — whatever the
// placement (cooperative tiles, a thread per node with more threads than CPUs, tiny queues).
#include <gtest/gtest.h>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/runtime/stop_request.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace tp {
namespace {

RunReport run_yaml(const std::string& yaml) {
    AppConfig app = parse_app_config(yaml, "test.yaml");
    AppRunner runner(app);
    return runner.run();
}

void expect_accounted(const RunReport& r) {
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_EQ(r.packets, r.delivered + r.drops);
    EXPECT_TRUE(r.pools_full());
    for (const auto& p : r.pools) EXPECT_EQ(p.available, p.capacity) << p.name;
}

TEST(AppRunner, SynthParseDropDeliversEveryPacketAndRefillsThePool) {
    const RunReport r = run_yaml("pipeline:\n  - stage: synth\n    count: 100000\n  - parse\n  - drop\n");
    EXPECT_EQ(r.packets, 100000u);
    EXPECT_EQ(r.bytes, 100000u * 64);
    EXPECT_EQ(r.delivered, 100000u);
    ASSERT_EQ(r.stages.size(), 3u);
    EXPECT_EQ(r.stages[1].in, 100000u);
    EXPECT_EQ(r.stages[1].out, 100000u);
    EXPECT_GT(r.seconds, 0.0);
    expect_accounted(r);
}

// threads: auto polls many tiles in turn on one pinned thread per CPU; per_tile gives every
// tile its own thread, far more threads than CPUs. Both must deliver everything.
class SixtyFourNodes : public ::testing::TestWithParam<const char*> {};

TEST_P(SixtyFourNodes, PipelineOnFewCpusRunsToCompletion) {
    std::string yaml = std::string("runtime: { threads: ") + GetParam() +
                       " }\nqueue: 64\npipeline:\n  - stage: synth\n    count: 50000\n";
    for (int i = 0; i < 62; ++i) yaml += "  - pass\n";
    yaml += "  - drop\n";
    const RunReport r = run_yaml(yaml);
    EXPECT_EQ(r.stages.size(), 64u);
    EXPECT_EQ(r.delivered, 50000u);
    for (const auto& s : r.stages) {
        if (s.kind == "processor") {
            EXPECT_EQ(s.out, 50000u) << s.name;
        }
    }
    expect_accounted(r);
}
INSTANTIATE_TEST_SUITE_P(AppRunner, SixtyFourNodes, ::testing::Values("auto", "per_tile"));

TEST(AppRunner, ChainedFramesLeaveThroughTheDropSinkWithEverySegment) {
    // 128-byte segments: most frames of the capture become chains, which the drop sink must
    // free segment by segment while one-segment frames take its fast path.
    const char* dir = std::getenv("TILEPIPE_PCAPS");
    ASSERT_NE(dir, nullptr);
    const RunReport r = run_yaml(std::string("pool: { data_room: 128 }\npipeline:\n  - stage: pcap\n    file: ") + dir +
                                 "/pcpp__example.pcap\n    loop: 3\n  - parse\n  - drop\n");
    EXPECT_GT(r.packets, 0u);
    EXPECT_EQ(r.delivered, r.packets);
    expect_accounted(r);
}

TEST(AppRunner, TinyQueuesApplyBackPressureWithoutLoss) {
    const RunReport r = run_yaml(
        "queue: 2\nruntime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 20000\n"
        "    size: imix\n  - pass\n  - drop\n");
    EXPECT_EQ(r.delivered, 20000u);
    expect_accounted(r);
}

TEST(AppRunner, PoolSmallerThanTheQueuesStillCompletes) {
    // The source waits for mbufs to come back instead of dropping or spinning forever.
    const RunReport r = run_yaml(
        "pool: { mbufs: 255, cache: 0 }\nqueue: 1024\npipeline:\n  - stage: synth\n    count: 30000\n  - pass\n  - drop\n");
    EXPECT_EQ(r.delivered, 30000u);
    expect_accounted(r);
}

TEST(AppRunner, StopRequestEndsAnEndlessSourceWithEverythingDrained) {
    AppConfig app = parse_app_config("pipeline:\n  - stage: synth\n    count: 0\n  - pass\n  - drop\n", "t.yaml");
    AppRunner runner(app);
    RunOptions opts;
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        request_stop();
    });
    const RunReport r = runner.run(opts);
    stopper.join();
    clear_stop_request();
    EXPECT_GT(r.packets, 0u);
    expect_accounted(r);
}

// The fields README's `--json OUT` paragraph documents: "" lists the top-level ones; a field
// written as "`name`: ..." is top-level too and opens the list of fields of each object under
// it, which runs to the next such field.
std::map<std::string, std::vector<std::string>> readme_json_fields() {
    const char* root = std::getenv("TILEPIPE_SOURCE_ROOT");
    if (root == nullptr) throw std::runtime_error("TILEPIPE_SOURCE_ROOT is not set");
    std::ifstream in(std::string(root) + "/README.md");
    const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t begin = readme.find("- `--json OUT` writes the report as JSON:");
    if (begin == std::string::npos) throw std::runtime_error("README.md has no `--json OUT` paragraph");
    const size_t end = readme.find("\n- ", begin + 1);
    const std::string text = readme.substr(begin, end - begin);
    std::map<std::string, std::vector<std::string>> fields;
    std::string section;
    const std::regex name("`([a-z_0-9]+)`(:?)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
        const std::string field = (*it)[1];
        const bool opens_list = (*it)[2] == ":";
        fields[opens_list ? "" : section].push_back(field);
        if (opens_list) section = field;
    }
    return fields;
}

TEST(AppRunner, ReportJsonCarriesEveryFieldReadmeDocuments) {
    const auto documented = readme_json_fields();
    // Guards the parse itself: the paragraph names a dozen top-level fields and three lists.
    ASSERT_GE(documented.at("").size(), 12u);
    for (const char* list : {"stages", "tiles", "channels"}) ASSERT_GE(documented.at(list).size(), 4u) << list;

    const RunReport r = run_yaml("app: j\npipeline:\n  - stage: synth\n    count: 1000\n  - drop\n");
    const nlohmann::json j = to_json(r);
    for (const auto& [section, names] : documented) {
        const nlohmann::json& part = section.empty() ? j : j[section];
        if (section.empty()) {
            for (const auto& k : names) EXPECT_TRUE(j.contains(k)) << "top-level field " << k;
            continue;
        }
        ASSERT_TRUE(part.is_array() && !part.empty() || part.is_object()) << section << ": " << part;
        const auto objects = part.is_array() ? part : nlohmann::json::array({part});
        for (const auto& o : objects)
            for (const auto& k : names) EXPECT_TRUE(o.contains(k)) << section << " has no " << k << ": " << o;
    }
    EXPECT_EQ(j["app"], "j");
    EXPECT_DOUBLE_EQ(j["gbps_l1"].get<double>(), (1000.0 * (64 + 24) * 8) / r.seconds / 1e9);
}

TEST(AppRunner, EveryTileReportsItsBusyShareAndEveryChannelItsHops) {
    // A farm: the emitter and collector run no stage, yet their tiles work.
    const RunReport r = run_yaml(
        "topology: epiphany16\nplacement: snake\nruntime: { fuse: never }\npipeline:\n  - stage: synth\n"
        "    count: 200000\n  - farm:\n      workers: 2\n      worker: [pass]\n  - drop\n");
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(j["tiles"].size(), 6u);  // synth, emitter, 2 workers, collector, drop
    for (const auto& t : j["tiles"]) {
        EXPECT_GT(t["busy"].get<double>(), 0.0) << t["node"];
        EXPECT_LE(t["busy"].get<double>(), 1.0) << t["node"];
        EXPECT_GE(t["cpu"].get<int>(), 0) << t["node"];
        EXPECT_EQ(t["tile"].size(), 2u);
    }
    ASSERT_EQ(j["channels"].size(), 6u);  // synth->emitter, emitter->2 workers, 2 workers->collector, collector->drop
    // On a mesh a channel's hops are the XY-routing distance between its two tiles; snake order
    // puts the six nodes on (0,0) (1,0) (2,0) (3,0) (3,1) (2,1).
    std::map<std::string, std::pair<int, int>> tile;
    for (const auto& t : j["tiles"]) tile[t["node"]] = {t["tile"][0].get<int>(), t["tile"][1].get<int>()};
    EXPECT_EQ(tile.at("drop"), (std::pair<int, int>{2, 1}));
    int hops_total = 0;
    for (const auto& c : j["channels"]) {
        const auto [fx, fy] = tile.at(c["from"]);
        const auto [tx, ty] = tile.at(c["to"]);
        EXPECT_EQ(c["hops"].get<int>(), std::abs(fx - tx) + std::abs(fy - ty)) << c["from"] << "->" << c["to"];
        hops_total += c["hops"].get<int>();
    }
    // synth-emitter 1, emitter-workers 1 and 2, workers-collector 2 and 1, collector-drop 1.
    EXPECT_EQ(hops_total, 8);
}

TEST(AppRunner, AFarmOpeningThePipelineReadsOnePortQueuePerWorker) {
    // RSS style: no emitter; worker w's port source reads RX queue w of one net_pcap port whose
    // queues each replay the capture, so every worker sees the whole capture once.
    const char* pcaps = std::getenv("TILEPIPE_PCAPS");
    ASSERT_NE(pcaps, nullptr);
    const std::string cap = std::string(pcaps) + "/pcpp__example.pcap";
    const RunReport once = run_yaml("pipeline:\n  - stage: pcap\n    file: " + cap + "\n  - drop\n");
    ASSERT_GT(once.packets, 0u);
    const RunReport r = run_yaml("pipeline:\n  - farm:\n      name: rx\n      workers: 3\n      emitter: false\n"
                                 "      worker:\n        - stage: port\n          file: " + cap +
                                 "\n        - parse\n  - drop\n");
    EXPECT_EQ(r.packets, 3 * once.packets);
    EXPECT_EQ(r.delivered, 3 * once.packets);
    for (const auto& s : r.stages)
        if (s.stage == "port") EXPECT_EQ(s.out, once.packets) << s.name;
    expect_accounted(r);

    // Run to completion on both sides: each worker also sends on a TX queue of its own.
    const RunReport rtc = run_yaml("pipeline:\n  - farm:\n      workers: 2\n      emitter: false\n      collect: none\n"
                                   "      worker:\n        - stage: port\n          file: " + cap +
                                   "\n        - parse\n        - { stage: port_out, device: net_null_rtc }\n");
    EXPECT_EQ(rtc.delivered, 2 * once.packets);
    for (const auto& s : rtc.stages)
        if (s.stage == "port_out") EXPECT_EQ(s.out, once.packets) << s.name;
    expect_accounted(rtc);
}

}  // namespace
}  // namespace tp
