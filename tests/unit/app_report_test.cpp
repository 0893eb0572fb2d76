// What a run reports: every field README documents and no other, traced packets, bytes, each
// stage's and tile's busy share, the progress line, farm and map emitters and collectors, each
// tile's CPU and each channel's hops.
#include <gtest/gtest.h>

#include "framework/graph/pool_sizing.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/node_task.hpp"
#include "framework/runtime/sequence_credit.hpp"
#include "framework/runtime/sequence_field.hpp"
#include "framework/runtime/stop_request.hpp"

#include <algorithm>
#include <csignal>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/app_run.hpp"

namespace tp {
namespace {

using test::expect_accounted;
using test::run_yaml;

// The fields README's `--json OUT` paragraph documents: "" lists the top-level ones; a field
// written as "`name`: ..." is an object or a list of objects (at the top, or inside the objects
// of another list) and opens the list of its fields, which runs to the next such field.
std::map<std::string, std::vector<std::string>> readme_json_fields() {
    const char* root = std::getenv("TILEPIPE_SOURCE_ROOT");
    if (root == nullptr) throw std::runtime_error("TILEPIPE_SOURCE_ROOT is not set");
    std::ifstream in(std::string(root) + "/README.md");
    const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t begin = readme.find("- `--json OUT` writes the report as JSON");
    if (begin == std::string::npos) throw std::runtime_error("README.md has no `--json OUT` paragraph");
    const size_t end = readme.find("\n- ", begin + 1);
    std::string text = readme.substr(begin, end - begin);
    text = text.substr(text.find("JSON"));  // past the option's own name
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

// The objects `section` names: the top-level object or list of that name, or the lists of that
// name inside the objects of other top-level lists.
nlohmann::json objects_named(const nlohmann::json& j, const std::string& section) {
    nlohmann::json objects = nlohmann::json::array();
    const auto add = [&](const nlohmann::json& v) {
        if (v.is_object()) objects.push_back(v);
        else
            for (const auto& o : v) objects.push_back(o);
    };
    if (j.contains(section)) add(j[section]);
    else
        for (const auto& outer : j)
            if (outer.is_array())
                for (const auto& o : outer)
                    if (o.is_object() && o.contains(section)) add(o[section]);
    return objects;
}

TEST(AppRunner, ReportJsonCarriesEveryFieldReadmeDocumentsAndNoOther) {
    const auto documented = readme_json_fields();
    // Guards the parse itself: the paragraph names a dozen top-level fields and the lists.
    ASSERT_GE(documented.at("").size(), 12u);
    for (const char* list : {"header", "stages", "tiles", "channels", "failures", "ports", "pools"})
        ASSERT_GE(documented.at(list).size(), 3u) << list;

    // A run that fills every list: a node fails, and the sink sends by port.
    const RunReport r = run_yaml(
        "app: j\nruntime: { fuse: never }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - { stage: throw_after, packets: 1000 }\n  - { stage: port_out, devices: \"net_null_j0, net_null_j1\" }\n");
    const nlohmann::json j = to_json(r);
    const auto listed = [](const std::vector<std::string>& names, const std::string& k) {
        return std::find(names.begin(), names.end(), k) != names.end();
    };
    for (const auto& [section, names] : documented) {
        if (section.empty()) {
            for (const auto& k : names)  // an object or a list is checked below, where it lives
                if (documented.count(k) == 0) EXPECT_TRUE(j.contains(k)) << "top-level field " << k;
            for (const auto& [k, v] : j.items()) EXPECT_TRUE(listed(names, k)) << "undocumented top-level field " << k;
            continue;
        }
        const nlohmann::json objects = objects_named(j, section);
        ASSERT_TRUE(!objects.empty()) << section << ": " << j.dump();
        for (const auto& o : objects) {
            for (const auto& k : names) EXPECT_TRUE(o.contains(k)) << section << " has no " << k << ": " << o;
            for (const auto& [k, v] : o.items())
                EXPECT_TRUE(listed(names, k) || documented.count(k) != 0) << "undocumented field " << section << "." << k;
        }
    }
    EXPECT_EQ(j["app"], "j");
    EXPECT_DOUBLE_EQ(j["gbps_l1"].get<double>(), (double(r.delivered) * (64 + 24) * 8) / r.seconds / 1e9);
    EXPECT_DOUBLE_EQ(j["offered_gbps_l1"].get<double>(), (double(r.packets) * (64 + 24) * 8) / r.offered_seconds / 1e9);
}

// --trace N: the first N packets the sources emit, each followed to its end across the
// farm's tiles (threads of their own here), without changing what the run counts; the other
// packets pass untraced.
TEST(AppRunner, TracedPacketsAreFollowedToTheirEndAcrossTiles) {
    AppConfig app = parse_app_config(
        "runtime: { threads: per_tile, fuse: never }\npipeline:\n  - { stage: synth, count: 20000 }\n  - parse\n"
        "  - farm: { workers: 3, dispatch: flow_hash, collect: ordered, worker: [pass, { stage: sample, every: 2 }] }\n"
        "  - drop\n",
        "test.yaml");
    app.trace = 40;
    AppRunner runner(app);
    const RunReport r = runner.run();
    expect_accounted(r);
    ASSERT_EQ(r.trace.packets.size(), 40u);
    size_t dropped = 0;
    for (const TracedPacket& p : r.trace.packets) {
        ASSERT_GE(p.path.size(), 4u) << p.packet;
        EXPECT_EQ(p.path[0].stage, "synth");
        EXPECT_EQ(p.path[0].step, "emitted");
        EXPECT_EQ(p.path[1].stage, "parse");
        const std::string& worker = p.path[2].node;
        EXPECT_EQ(p.path[2].stage, worker + "/pass");
        EXPECT_EQ(p.path[3].stage, worker + "/sample");
        if (p.end() == "dropped") {
            ++dropped;
            EXPECT_EQ(p.path.size(), 4u);
            EXPECT_EQ(p.path[3].reason, "sampled_out");
        } else {
            EXPECT_EQ(p.end(), "delivered");
            ASSERT_EQ(p.path.size(), 5u);
            EXPECT_EQ(p.path[4].stage, "drop");
        }
    }
    EXPECT_GT(dropped, 0u);
    EXPECT_LT(dropped, 40u);
}

TEST(AppRunner, EveryNodeCountsTheBytesItPassesOn) {
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000, size: 100 }\n  - pass\n"
                                 "  - { stage: sample, every: 2 }\n  - drop\n");
    ASSERT_EQ(r.stages.size(), 4u);
    for (const auto& s : r.stages) EXPECT_EQ(s.bytes, s.out * 100) << s.name;
    EXPECT_EQ(r.delivered_bytes, 500u * 100);
}

TEST(AppRunner, ASinksBytesAndTheHeadlineCountOnlyWhatItDelivered) {
    // Half the packets are dropped at the sink (as a full TX ring would): the delivered bit
    // rate must not count their bytes while the packet rate leaves them out.
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000, size: 100 }\n"
                                 "  - { stage: refuse, every: 2 }\n");
    ASSERT_EQ(r.stages.size(), 2u);
    EXPECT_EQ(r.stages[1].out, 500u);
    EXPECT_EQ(r.stages[1].drops, 500u);
    EXPECT_EQ(r.stages[1].bytes, 500u * 100);
    EXPECT_EQ(r.delivered_bytes, 500u * 100);
    EXPECT_DOUBLE_EQ(r.gbps_l2(), 500.0 * 100 * 8 / r.seconds / 1e9);
    expect_accounted(r);
}

TEST(AppRunner, ARunWithoutLatencySamplesPrintsNoPercentiles) {
    // Every packet dropped at the sink: zeros would read as a latency of 0 us.
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n  - { stage: refuse, every: 1 }\n");
    EXPECT_EQ(r.delivered, 0u);
    EXPECT_EQ(r.latency.end_to_end.samples, 0u);
    const std::string table = format_table(r);
    EXPECT_NE(table.find("latency us (sample 64, 0 samples): none"), std::string::npos) << table;
    EXPECT_EQ(table.find("p50"), std::string::npos) << table;
}

TEST(AppRunner, SetupBeforeAndAfterTheTrafficIsOutsideTheTimedWindow) {
    // Opening takes 400 ms and closing 600 ms; the packets themselves take a few milliseconds.
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n"
                                 "  - { stage: slow_setup, open_ms: 400, close_ms: 600 }\n  - drop\n");
    EXPECT_EQ(r.delivered, 1000u);
    EXPECT_GT(r.seconds, 0.0);
    EXPECT_LT(r.seconds, 0.3) << "the window counts setup";
    EXPECT_LE(r.offered_seconds, r.seconds);
    EXPECT_GE(r.setup_s, 0.95);
}

TEST(AppRunner, AStageAndItsTileReportOneBusyFraction) {
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 200000 }\n  - parse\n  - drop\n");
    ASSERT_EQ(r.tiles.size(), r.stages.size());
    for (size_t i = 0; i < r.stages.size(); ++i) {
        EXPECT_EQ(r.stages[i].busy_fraction, r.tiles[i].busy_fraction) << r.stages[i].name;
        EXPECT_GT(r.stages[i].busy_fraction, 0.0) << r.stages[i].name;
        EXPECT_LE(r.stages[i].busy_fraction, 1.0) << r.stages[i].name;
    }
}

TEST(AppRunner, TheProgressLineReadsTheRunningCountersAndSaysWhatEachNumberIs) {
    // Lines every 10 ms from the start: the sampling thread reads the tiles' counters while
    // they run (under ThreadSanitizer too).
    AppConfig app = parse_app_config("pipeline:\n  - { stage: synth, count: 3M }\n  - parse\n  - drop\n", "t.yaml");
    AppRunner runner(app);
    RunOptions opts;
    std::vector<std::string> lines;
    opts.progress = [&lines](const std::string& l) { lines.push_back(l); };
    opts.progress_after = std::chrono::milliseconds(0);
    opts.progress_every = std::chrono::milliseconds(10);
    const RunReport r = runner.run(opts);
    EXPECT_EQ(r.delivered, 3000000u);
    ASSERT_FALSE(lines.empty());
    const std::regex labelled("(waiting for the first packet|[0-9.]+ m?s: [0-9.]+( M)? packets; last .* average .*(left|all emitted, draining))");
    for (const auto& l : lines) EXPECT_TRUE(std::regex_match(l, labelled)) << l;
}

TEST(AppRunner, FarmAndMapEmittersAndCollectorsAppearInTheReportWithThePacketsTheyPassed) {
    for (const char* pattern : {"farm", "map"}) {
        SCOPED_TRACE(pattern);
        const RunReport r = run_yaml(std::string("runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 20000 }\n  - ") +
                                     pattern + ":\n      workers: 2\n      worker: [pass]\n  - drop\n");
        int emitters = 0, collectors = 0;
        std::vector<int> workers;  // each tile's worker index (-1: not a worker), for --metrics' label
        for (const TileReport& t : r.tiles) workers.push_back(t.worker);
        EXPECT_EQ(workers, (std::vector<int>{-1, -1, 0, 1, -1, -1})) << "synth, emitter, 2 workers, collector, drop";
        for (const TileReport& t : r.tiles) {
            if (t.role.empty()) continue;
            (t.role == "emitter" ? emitters : collectors) += 1;
            EXPECT_EQ(t.packets, 20000u) << t.node;
            EXPECT_EQ(t.bytes, 20000u * 64) << t.node;
            EXPECT_NE(format_table(r).find("\n" + t.node + " "), std::string::npos) << format_table(r);
        }
        EXPECT_EQ(emitters, 1);
        EXPECT_EQ(collectors, 1);
    }
}

TEST(AppRunner, AFarmsCollectorThatFeedsTheNextFarmIsReportedAsBoth) {
    // Folded, the first farm's collector dispatches to the second farm's workers.
    const RunReport r = run_yaml("runtime: { fuse: always }\npipeline:\n  - { stage: synth, count: 20000 }\n"
                                 "  - farm: { name: a, workers: 2, worker: [pass] }\n"
                                 "  - farm: { name: b, workers: 2, worker: [pass] }\n  - drop\n");
    std::map<std::string, std::string> role;
    for (const TileReport& t : r.tiles) role[t.node] = t.role;
    ASSERT_EQ(role.count("a.collector"), 1u) << format_table(r);
    EXPECT_EQ(role["a.collector"], "collector+emitter");
    EXPECT_NE(format_table(r).find("(collector+emitter)"), std::string::npos) << format_table(r);
    expect_accounted(r);
}

TEST(AppRunner, EveryTileReportsItsBusyShareAndEveryChannelItsHops) {
    // A farm: the emitter and collector run no stage, yet their tiles work.
    const RunReport r = run_yaml(
        "topology: epiphany16\nplacement: snake\nruntime: { fuse: never }\npipeline:\n  - stage: synth\n"
        "    count: 200000\n  - farm:\n      workers: 2\n      worker: [pass]\n  - drop\n");
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(j["tiles"].size(), 6u);  // synth, emitter, 2 workers, collector, drop
    for (const auto& t : j["tiles"]) {
        EXPECT_GT(t["busy_fraction"].get<double>(), 0.0) << t["node"];
        EXPECT_LE(t["busy_fraction"].get<double>(), 1.0) << t["node"];
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

}  // namespace
}  // namespace tp
