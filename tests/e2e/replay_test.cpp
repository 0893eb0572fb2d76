// What a tcpreplay or VPP user reaches for first: `--limit N` ends a replay after N packets,
// `--pps`/`--mbps`/`--multiplier` pace every source that can pace (and are refused where none
// can), and `--trace N` shows the path and verdict of the first N packets, node by node.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

using json = nlohmann::json;

TEST(Replay, LimitEndsTheReplayAfterNPacketsAndTheReportStaysExact) {
    // Within the third of three passes (4631 packets each), stopped by the limit alone.
    json j = run_json("run conf/forward.yaml --loop 3 --limit 10000");
    expect_exact(j);
    EXPECT_EQ(j["packets"], 10000);
    EXPECT_EQ(j["delivered"], 10000);
    // Fewer than one pass of the capture.
    j = run_json("run conf/forward.yaml --limit 7");
    EXPECT_EQ(j["packets"], 7);
    EXPECT_EQ(j["header"]["overrides"][0], "--limit 7");
    // A generator stops at its count.
    j = run_json("run conf/default.yaml --limit 1234");
    EXPECT_EQ(j["packets"], 1234);
    const CommandResult r = tilepipe("validate conf/forward.yaml --limit 0x");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("tilepipe: --limit 0x: parameter 'limit' expects an unsigned integer", 0), 0u) << r.err;
    expect_refused("validate conf/forward.yaml --limit 5 --set src.limit=6",
                   "tilepipe: --set src.limit=6: sets what --limit 5 already set; give each setting once\n");
    // Several sources (an RSS farm's workers each run one) would share a limit by guess.
    const CommandResult farm = tilepipe("validate conf/rss.yaml --limit 5");
    EXPECT_EQ(farm.status, 2);
    EXPECT_NE(farm.err.find("--limit 5: counts the packets of one source, and each of the "), std::string::npos) << farm.err;
}

TEST(Replay, PaceShortcutsSetEverySourcesPaceOrAreRefused) {
    // The shortcut replaces the source's own pace (one of pps, mbps, speed): here a paced
    // replay of 200 packets at 2000 packets/s lasts about 0.1 s, not less.
    const json j = run_json("run conf/forward.yaml --limit 200 --pps 2000");
    EXPECT_EQ(j["packets"], 200);
    EXPECT_GE(j["seconds"].get<double>(), 0.9 * 200 / 2000.0);
    expect_refused("validate conf/forward.yaml --mbps 100 --set src.pps=5",
                   "tilepipe: --set src.pps=5: sets what --mbps 100 already set; give each setting once\n");
    EXPECT_EQ(tilepipe("validate conf/forward.yaml --multiplier 2").status, 0);
    EXPECT_EQ(tilepipe("validate conf/default.yaml --pps 1000").status, 0);
    expect_refused("validate conf/default.yaml --multiplier 2",
                   "tilepipe: --multiplier 2: no source of the app paces by the capture's timestamps (a pcap source does); "
                   "its sources: synth (synth)\n");
    const CommandResult r = tilepipe("validate conf/rss.yaml --pps 1000");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--pps 1000: no source of the app paces its packets (pcap and synth sources do); its sources: "),
              std::string::npos)
        << r.err;
}

// Every hop of a traced packet is a stage instance the report lists, on the tile it reports.
void expect_hops_match_the_report(const json& j) {
    for (const auto& p : j["trace"])
        for (const auto& h : p["path"]) {
            const json* s = stage_named(j, h["stage"]);
            ASSERT_NE(s, nullptr) << h.dump();
            EXPECT_EQ(h["tile"], (*s)["tile"]) << h.dump();
        }
}

TEST(Trace, ShowsEachPacketsPathThroughAFarmToItsSink) {
    CommandResult r;
    const json j = run_json("run conf/firewall.yaml --set pcap_out.file=" + tmp_path("fw.pcap") + " --set fw.flow_table.export=" +
                                tmp_path("flows.csv") + " --trace 4",
                            &r);
    expect_exact(j);
    ASSERT_EQ(j["trace"].size(), 4u) << j["trace"].dump();
    for (size_t i = 0; i < 4; ++i) {
        const json& p = j["trace"][i];
        EXPECT_EQ(p["packet"], i + 1);
        EXPECT_EQ(p["end"], "delivered");
        ASSERT_EQ(p["path"].size(), 5u) << p.dump();
        EXPECT_EQ(p["path"][0]["stage"], "src");
        EXPECT_EQ(p["path"][0]["step"], "emitted");
        EXPECT_EQ(p["path"][1]["stage"], "parse");
        const std::string worker = p["path"][2]["node"];
        EXPECT_EQ(worker.rfind("fw.", 0), 0u);
        EXPECT_EQ(p["path"][2]["stage"], worker + "/acl");
        EXPECT_EQ(p["path"][3]["stage"], worker + "/flow_table") << "one worker runs the whole chain";
        EXPECT_EQ(p["path"][4]["stage"], "pcap_out");
        EXPECT_EQ(p["path"][4]["step"], "delivered");
    }
    expect_hops_match_the_report(j);
    EXPECT_NE(r.out.find("trace (first 4 packets):\n  1: src ["), std::string::npos) << r.out;
    std::remove(tmp_path("fw.pcap").c_str());
    std::remove(tmp_path("flows.csv").c_str());
}

TEST(Trace, NamesTheStageAndReasonOfADrop) {
    // `less 0` matches nothing: every packet ends at the filter, counted as no_match.
    const json j = run_json("run conf/filter.yaml --set 'filter.expr=less 0' --trace 3");
    expect_exact(j);
    ASSERT_EQ(j["trace"].size(), 3u);
    for (const auto& p : j["trace"]) {
        EXPECT_EQ(p["end"], "dropped");
        EXPECT_EQ(p["path"].back()["stage"], "filter");
        EXPECT_EQ(p["path"].back()["reason"], "no_match");
    }
    // A map's workers each take a share of a burst: the packets go through the map's workers.
    const json m = run_json("run conf/map.yaml --set synth.count=5000 --trace 2");
    ASSERT_EQ(m["trace"].size(), 2u);
    for (const auto& p : m["trace"]) {
        EXPECT_EQ(p["end"], "delivered");
        ASSERT_EQ(p["path"].size(), 3u) << p.dump();
        EXPECT_EQ(p["path"][1]["stage"].get<std::string>().rfind("map.", 0), 0u) << p.dump();
    }
    expect_hops_match_the_report(m);
    // Asking for more packets than the sources emit traces them all.
    const json all = run_json("run conf/default.yaml --set synth.count=3 --trace 10");
    EXPECT_EQ(all["trace"].size(), 3u);
    // Without --trace, the report has no trace.
    EXPECT_FALSE(run_json("run conf/default.yaml --set synth.count=3").contains("trace"));
}

}  // namespace
}  // namespace tp::test
