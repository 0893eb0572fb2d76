// `tilepipe plot` on every JSON tilepipe writes (a run report, --stats-interval lines, a
// topology, each bench's report): a PNG of the size scripts/plot.py documents for its kind. A
// file of another kind, a field of the wrong type or a tile off the mesh is refused naming what
// was wrong, with exit status 2, and so is an -o that is not a .png file.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

struct Png {
    uint64_t bytes = 0;
    uint32_t width = 0, height = 0;
};

// The size a PNG's IHDR chunk declares (big-endian width and height at bytes 16 and 20).
Png png_at(const std::string& path) {
    Png p;
    const std::string data = read_file(path);
    p.bytes = data.size();
    if (data.size() < 24 || data.compare(1, 3, "PNG") != 0 || data.compare(12, 4, "IHDR") != 0) return p;
    const auto be32 = [&](size_t at) {
        uint32_t v = 0;
        for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<uint8_t>(data[at + i]);
        return v;
    };
    p.width = be32(16);
    p.height = be32(20);
    return p;
}

// Plots `json` and expects a PNG of width x height with something drawn on it.
void expect_plot(const std::string& json, uint32_t width, uint32_t height, const std::string& kind) {
    const std::string png = tmp_path(kind + ".png");
    fs::remove(png);
    const CommandResult r = tilepipe("plot " + json + " -o " + png);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(": " + kind + " ("), std::string::npos) << r.out;
    const Png p = png_at(png);
    EXPECT_GT(p.bytes, 10000u) << "an image with something drawn on it";
    EXPECT_EQ(p.width, width) << kind;
    EXPECT_EQ(p.height, height) << kind;
    fs::remove(png);
}

// A branching app's report: its graph beside the mesh, each edge with its output and rate.
TEST(Plot, DrawsABranchingAppsGraphWithItsEdgesRates) {
    const std::string json = tmp_path("router.json");
    std::string sets;
    for (const char* sink : {"p1", "p2", "p3", "unrouted", "v6"}) sets += std::string(" --set ") + sink + ".file=" + tmp_path(sink);
    ASSERT_EQ(tilepipe("run conf/router.yaml --quiet --json " + json + sets).status, 0);
    const CommandResult edges = run_command("cd '" + source_root() + "/scripts' && python3 -c \"import json, plot; "
                                            "print(len(plot.branch_edges(json.load(open('" + json + "')))))\"");
    EXPECT_EQ(edges.out, "9\n") << edges.err;  // src -> parse -> l3, l3's 3 outputs, route's 4
    expect_plot(json, 1400, 1000, "run");
}

TEST(Plot, DrawsARunReportAndItsIntervalStats) {
    const std::string json = tmp_path("run.json"), stats = tmp_path("stats.jsonl");
    const CommandResult r = tilepipe("run conf/farm.yaml --set synth.count=300k --quiet --json " + json +
                                     " --stats-interval 0.05 --stats-out " + stats);
    ASSERT_EQ(r.status, 0) << r.err;
    expect_plot(json, 1400, 1000, "run");
    expect_plot(stats, 1200, 800, "stats");
    // Without -o, the PNG takes the file's name with its extension replaced, whatever it is.
    for (const auto& [in, png] : {std::pair{json, tmp_path("run.png")}, std::pair{stats, tmp_path("stats.png")}}) {
        fs::remove(png);
        const CommandResult p = tilepipe("plot " + in);
        EXPECT_EQ(p.status, 0) << p.err;
        EXPECT_EQ(p.out.rfind(png + ": ", 0), 0u) << p.out;
        EXPECT_TRUE(fs::exists(png)) << png;
        fs::remove(png);
    }
    fs::remove(json);
    fs::remove(stats);
}

TEST(Plot, DrawsATopology) {
    const std::string json = tmp_path("topo.json");
    ASSERT_EQ(tilepipe("topo conf/map.yaml --topology tilepro64 --json " + json).status, 0);
    expect_plot(json, 1000, 600, "topo");
    // The tiles tilepro64 keeps for the OS are marked as such, from the plan and from a report.
    const CommandResult r = tilepipe("plot " + json + " -o " + tmp_path("topo.png"));
    EXPECT_NE(r.out.find(", 6 reserved tiles marked)"), std::string::npos) << r.out;
    const std::string report = tmp_path("mesh.json");
    ASSERT_EQ(tilepipe("run conf/default.yaml --set synth.count=1000 --topology tilepro64 --quiet --json " + report).status, 0);
    const CommandResult m = tilepipe("plot " + report + " -o " + tmp_path("mesh.png"));
    EXPECT_NE(m.out.find(", 6 reserved tiles marked)"), std::string::npos) << m.out;
    fs::remove(tmp_path("topo.png"));
    fs::remove(tmp_path("mesh.png"));
    fs::remove(report);
    fs::remove(json);
}

// A node's name longer than its tile holds is broken after its separators (or cut), so it never
// runs into the next tile's.
TEST(Plot, ANameLongerThanItsTileIsBrokenAtItsSeparators) {
    const CommandResult r = run_command("cd '" + source_root() + "/scripts' && python3 -c \"import plot; "
                                        "print([plot.fit_name(n, 9) for n in ['drop', 'piped.1.pass_4', 'rtc.collector', 'fw.0/flow_table']])\"");
    EXPECT_EQ(r.out, "['drop', 'piped.1.\\npass_4', 'rtc.\\ncollector', 'fw.0/\\nflow_tab\u2026']\n") << r.err;
}

TEST(Plot, DrawsEveryBenchReport) {
    const std::string json = tmp_path("bench.json");
    const struct {
        std::string kind, args;
        uint32_t width;
    } benches[] = {
        {"pingpong", "--reps 1 --iters 2000 --transports sm,ring,lock", 1000},
        {"asym", "--reps 1 --iters 2000 --senders 1,2 --transports sm,ring", 1000},
        {"stream", "--reps 1 --items 20000 --bursts 1,8 --transports ring,sm", 1000},
        {"mapvec", "--reps 1 --tasks 40 --m 56 --workers 1,2 --variants sm_tree,ring_tree", 1400},
        {"latency", "--seconds 0.2 --percent 50,100", 1000},
    };
    for (const auto& b : benches) {
        SCOPED_TRACE(b.kind);
        fs::remove(json);
        const CommandResult r = tilepipe("bench " + b.kind + " " + b.args + " --json " + json);
        ASSERT_EQ(r.status, 0) << r.err;
        expect_plot(json, b.width, 600, b.kind);
    }
    fs::remove(json);
}

TEST(Plot, AFileOfAnotherKindIsRefusedNamingWhatIsWrong) {
    const std::string json = tmp_path("wrong.json");
    const struct {
        std::string content, says;
    } wrong[] = {
        {"{\"colour\": \"blue\"}", "neither a run report ('stages'), a bench report ('bench' and 'rows')"},
        {"{\"bench\": \"teleport\", \"rows\": [{}]}", "a bench report of kind 'teleport', which plot cannot draw"},
        {"{\"bench\": \"stream\", \"rows\": []}", "a 'stream' bench report without rows"},
        {"{\"app\": \"x\", \"stages\": []}", "a run report without stages"},
        {"[1, 2]", "a JSON list that is not --stats-interval lines"},
        {"pipeline:\n  - synth\n", "not JSON: "},
    };
    for (const auto& w : wrong) {
        std::ofstream(json) << w.content;
        const CommandResult r = tilepipe("plot " + json + " -o " + tmp_path("wrong.png"));
        EXPECT_EQ(r.status, 2) << w.content;
        EXPECT_NE(r.err.find("tilepipe plot: " + json + ": " + w.says), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(tmp_path("wrong.png")));
    }
    fs::remove(json);
    const CommandResult missing = tilepipe("plot /nonexistent/r.json");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("tilepipe plot: /nonexistent/r.json: cannot read it: No such file or directory"),
              std::string::npos)
        << missing.err;
}

// Whatever a file holds, plot draws it or refuses it in one line naming the file and the field,
// exit status 2: never a Python traceback, a hang or a picture of something else.
TEST(Plot, BadInputIsRefusedInOneLineNamingTheField) {
    const std::string report = tmp_path("good.json"), bad = tmp_path("bad.json"), png = tmp_path("bad.png");
    ASSERT_EQ(tilepipe("run conf/default.yaml --set synth.count=1000 --quiet --json " + report).status, 0);
    const nlohmann::json good = nlohmann::json::parse(read_file(report));
    ASSERT_GE(good["tiles"].size(), 2u);
    const auto refused = [&](const std::string& content, const std::string& says) {
        std::ofstream(bad, std::ios::binary) << content;
        fs::remove(png);
        const CommandResult r = tilepipe("plot " + bad + " -o " + png);
        EXPECT_EQ(r.status, 2) << says;
        EXPECT_EQ(r.err, "tilepipe plot: " + bad + ": " + says + "\n");
        EXPECT_FALSE(fs::exists(png)) << says;
    };
    refused(std::string("\xd4\xc3\xb2\xa1\x02\x00\x04\x00", 8),
            "not JSON: a binary file (byte 0xd4 at offset 0 is not UTF-8 text)");
    refused(std::string(100000, '[') + std::string(100000, ']'),
            "not JSON tilepipe writes: lists or objects nested too deep to read");
    nlohmann::json j = good;
    j["tiles"][1]["node"] = nullptr;
    refused(j.dump(), "tiles[1].node: null, not a string");
    j = good;
    j["channels"] = "x";
    refused(j.dump(), "channels: a string, not a list");
    j = good;
    j["stages"][0]["cycles_per_packet"] = "fast";
    refused(j.dump(), "stages[0].cycles_per_packet: a string, not a number");
    j = good;
    j["tiles"][0]["tile"] = {99999999, -5};  // drawn, a mesh that size took minutes
    refused(j.dump(), "tiles[0].tile: [99999999, -5] is off any mesh (x and y are 0 to 8191)");
    j = good;
    j["width"] = 8;
    j["height"] = 1;
    j["tiles"][0]["tile"] = {9, 0};
    refused(j.dump(), "tiles[0].tile: [9, 0] is off the report's 8 x 1 mesh");

    // A name too long for its place is cut, not a matplotlib error.
    j = good;
    j["stages"][0]["name"] = std::string(100000, 's');
    std::ofstream(bad) << j.dump();
    const CommandResult drawn = tilepipe("plot " + bad + " -o " + png);
    EXPECT_EQ(drawn.status, 0) << drawn.err;
    EXPECT_EQ(drawn.out.rfind(png + ": run (", 0), 0u) << drawn.out;
    EXPECT_TRUE(fs::exists(png));
    fs::remove(png);
    fs::remove(bad);
    fs::remove(report);
}

// -o names a .png file: another extension, none or a directory is refused before the report is
// read (matplotlib would write another format, or DIR.png while printing DIR).
TEST(Plot, AnOutputThatIsNotAPngFileIsRefused) {
    const std::string dir = tmp_path("plots");
    fs::create_directories(dir);
    const struct {
        std::string out, says;
    } wrong[] = {
        {tmp_path("x.txt"), "not a .png file name: plot writes PNG, -o names it (e.g. -o plot.png)"},
        {tmp_path("good.json"), "not a .png file name: plot writes PNG, -o names it (e.g. -o plot.png)"},
        {tmp_path("noext"), "not a .png file name: plot writes PNG, -o names it (e.g. -o plot.png)"},
        {dir, "a directory: -o names the PNG file to write (e.g. " + dir + "/plot.png)"},
    };
    for (const auto& w : wrong) {
        const CommandResult r = tilepipe("plot /nonexistent/r.json -o " + w.out);
        EXPECT_EQ(r.status, 2) << w.out;
        EXPECT_EQ(r.err, "tilepipe plot: " + w.out + ": " + w.says + "\n");
        EXPECT_FALSE(fs::exists(w.out + ".png")) << w.out;
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace tp::test
