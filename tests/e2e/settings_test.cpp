// Every setting README's --set table documents takes effect: each is set to a value other than
// its default and read back from `tilepipe topo --json` (the plan) or a run's `--json` report,
// so a setting that is accepted and then ignored fails here. A setting given where it cannot
// act (a link setting on a node without a link of its own) is refused at its place, naming the
// setting that does act.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

using json = nlohmann::json;

json topo_json(const std::string& args) {
    const std::string out = tmp_path("topo.json");
    const CommandResult r = tilepipe("topo " + args + " --json " + out);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    json j = json::parse(read_file(out), nullptr, false);
    std::filesystem::remove(out);
    return j;
}

const json* node_named(const json& topo, const std::string& name) {
    for (const auto& n : topo["nodes"])
        if (n["name"] == name) return &n;
    return nullptr;
}

// The first channel into node `to`.
const json* channel_into(const json& j, const std::string& to) {
    for (const auto& c : j["channels"])
        if (c["to"] == to) return &c;
    return nullptr;
}

const json* tile_named(const json& report, const std::string& name) {
    for (const auto& t : report["tiles"])
        if (t["node"] == name) return &t;
    return nullptr;
}

bool every_channel(const json& j, const std::string& field, const json& value) {
    for (const auto& c : j["channels"])
        if (c[field] != value) return false;
    return !j["channels"].empty();
}

size_t nodes_named_like(const json& topo, const std::string& prefix) {
    size_t n = 0;
    for (const auto& node : topo["nodes"]) {
        const std::string name = node["name"];
        if (name.rfind(prefix, 0) == 0 && name.find_first_not_of("0123456789", prefix.size()) == std::string::npos) ++n;
    }
    return n;
}

bool any_node(const json& topo, const std::string& field, const json& value) {
    for (const auto& n : topo["nodes"])
        if (n[field] == value) return true;
    return false;
}

// One documented setting: the key as README's table spells it, the command line that sets it
// to a value other than its default, and what the plan or report must then show.
struct Setting {
    std::string key;   // "transport", "pool.mbufs", "FARM.workers", "NODE.tile", "W/NODE.memory"
    std::string args;  // CONF and --set ... (for topo, or run when `run`)
    std::function<bool(const json&)> shows;
    bool run = false;
};

std::vector<Setting> settings() {
    const std::string udn = "conf/default.yaml --set transport=udn ";
    return {
        {"app", "conf/default.yaml --set app=renamed", [](const json& j) { return j["app"] == "renamed"; }},
        {"transport", "conf/default.yaml --set transport=sm", [](const json& j) { return every_channel(j, "transport", "sm"); }},
        {"queue", "conf/default.yaml --set queue=64", [](const json& j) { return every_channel(j, "capacity", 64); }},
        {"topology", "conf/default.yaml --set topology=epiphany16", [](const json& j) { return j["topology"] == "epiphany16"; }},
        {"placement", "conf/default.yaml --set placement=snake", [](const json& j) { return j["placement"] == "snake"; }},
        {"memory", "conf/default.yaml --set memory=interleave",
         [](const json& j) { return j["memory"] == "interleave" && (*node_named(j, "parse"))["memory"] == "interleave"; }},
        {"latency", "conf/default.yaml --set synth.count=1000 --set latency=all",
         [](const json& j) { return j["latency_us"]["mode"] == "all"; }, true},
        {"pool.mbufs", "conf/default.yaml --set pool.mbufs=32767", [](const json& j) { return j["pools"][0]["mbufs"] == 32767; }},
        {"pool.cache", "conf/default.yaml --set pool.cache=128", [](const json& j) { return j["pools"][0]["cache"] == 128; }},
        {"pool.data_room", "conf/default.yaml --set pool.data_room=4096",
         [](const json& j) { return j["pools"][0]["data_room"] == 4096; }},
        {"runtime.threads", "conf/farm.yaml --set runtime.threads=per_tile",
         [](const json& j) { return j["threads"] == j["nodes"].size(); }},
        // auto fuses only when tiles outnumber CPUs: never and always differ from it on any host.
        {"runtime.fuse", "conf/farm.yaml --set runtime.fuse=never",
         [](const json& j) { return node_named(j, "rtc.emitter") != nullptr && node_named(j, "rtc.collector") != nullptr; }},
        {"runtime.fuse", "conf/farm.yaml --set runtime.fuse=always", [](const json& j) { return node_named(j, "rtc.emitter") == nullptr; }},
        {"runtime.idle", "conf/default.yaml --set runtime.idle=spin", [](const json& j) { return j["idle"] == "spin"; }},
        // Only the tile whose stage reads the packets (parse) prefetches; the source makes them, drop frees them unread.
        {"runtime.prefetch", "conf/default.yaml --set runtime.prefetch=burst",
         [](const json& j) {
             return j["prefetch"] == "burst" && (*node_named(j, "parse"))["prefetch"] == true &&
                    (*node_named(j, "synth"))["prefetch"] == false && (*node_named(j, "drop"))["prefetch"] == false;
         }},
        // What the links between ranks are is seen under mpirun (ranks_test checks each link's kind).
        {"runtime.rank_links", "conf/default.yaml --set drop.rank=1 --set runtime.rank_links=messages",
         [](const json& j) { return j["rank_links"] == "messages"; }},
        {"FARM.workers", "conf/firewall.yaml --set fw.workers=3", [](const json& j) { return nodes_named_like(j, "fw.") == 3; }},
        {"FARM.dispatch", "conf/farm.yaml --set rtc.dispatch=round_robin",
         [](const json& j) { return any_node(j, "dispatch", "round_robin"); }},
        {"FARM.collect", "conf/farm.yaml --set rtc.collect=unordered", [](const json& j) { return !any_node(j, "ordered", true); }},
        {"FARM.emitter", "conf/firewall.yaml --set runtime.fuse=never --set fw.emitter=false",
         [](const json& j) { return node_named(j, "fw.emitter") == nullptr && (*node_named(j, "parse"))["dispatch"] == "flow_hash"; }},
        {"FARM.multicast", "conf/map.yaml --set map.multicast=linear",
         [](const json& j) {
             for (const auto& c : j["channels"])
                 if (c["from"] == "map.emitter" && c["to"] == "map.7") return true;
             return false;
         }},
        {"FARM.transport", "conf/firewall.yaml --set fw.transport=lock",
         [](const json& j) { return (*channel_into(j, "fw.0"))["transport"] == "lock"; }},
        {"FARM.queue", "conf/firewall.yaml --set fw.queue=64", [](const json& j) { return (*channel_into(j, "fw.0"))["capacity"] == 64; }},
        {"FARM.memory", "conf/firewall.yaml --set fw.memory=local", [](const json& j) { return (*node_named(j, "fw.3"))["memory"] == "local"; }},
        {"FARM.transport", "conf/map.yaml --set map.transport=lock",
         [](const json& j) { return (*channel_into(j, "map.0"))["transport"] == "lock"; }},
        {"NODE.param", "conf/default.yaml --set synth.count=1234", [](const json& j) { return j["packets"] == 1234; }, true},
        {"NODE.transport", "conf/default.yaml --set parse.transport=lock",
         [](const json& j) { return (*channel_into(j, "parse"))["transport"] == "lock"; }},
        {"NODE.queue", "conf/default.yaml --set drop.queue=64", [](const json& j) { return (*channel_into(j, "drop"))["capacity"] == 64; }},
        {"NODE.tile", "conf/default.yaml --set topology=epiphany16 --set parse.tile=[3,3]",
         [](const json& j) { return (*node_named(j, "parse"))["tile"] == json::array({3, 3}); }},
        {"NODE.memory", "conf/default.yaml --set parse.memory=local", [](const json& j) { return (*node_named(j, "parse"))["memory"] == "local"; }},
        // A farm worker chain's first stage sets the links to the workers (every worker).
        {"FARM.NODE.transport", "conf/firewall.yaml --set fw.acl.transport=lock",
         [](const json& j) { return (*channel_into(j, "fw.2"))["transport"] == "lock"; }},
        {"FARM.NODE.queue", "conf/firewall.yaml --set fw.acl.queue=64", [](const json& j) { return (*channel_into(j, "fw.1"))["capacity"] == 64; }},
        {"FARM.NODE.transport", "conf/farm.yaml --set piped.pass_4.transport=sm",
         [](const json& j) { return (*channel_into(j, "piped.1.pass_4"))["transport"] == "sm"; }},
        {"W/NODE.memory", "conf/firewall.yaml --set fw.1/acl.memory=interleave",
         [](const json& j) { return (*node_named(j, "fw.1"))["memory"] == "interleave" && (*node_named(j, "fw.0"))["memory"] == "first_touch"; }},
        {"W/NODE.tile", "conf/firewall.yaml --set topology=epiphany16 --set fw.1/acl.tile=[3,3]",
         [](const json& j) { return (*node_named(j, "fw.1"))["tile"] == json::array({3, 3}); }},
        {"W/NODE.param", "conf/compose.yaml --set synth.count=20000 --set flows.1.sample.every=1",
         [](const json& j) {
             for (const auto& s : j["stages"])
                 if (s["name"] == "flows.1.sample") return s["in"] == s["out"];
             return false;
         },
         true},
        // The node stands still for stall_ms once it took after_packets packets.
        {"chaos.stall", "conf/default.yaml --set synth.count=2000 --set chaos.stall=parse --set chaos.stall_ms=20",
         [](const json& j) {
             const double ms = (*tile_named(j, "parse"))["stalled_ms"].get<double>();
             return ms >= 19.0 && ms < 190.0;  // stall_ms, not its default of 200
         },
         true},
        {"chaos.stall_ms", "conf/default.yaml --set synth.count=2000 --set chaos.stall=parse --set chaos.stall_ms=20",
         [](const json& j) { return (*tile_named(j, "parse"))["stalled_ms"].get<double>() < 190.0; }, true},
        {"chaos.after_packets", "conf/default.yaml --set synth.count=2000 --set chaos.stall=parse --set chaos.after_packets=5000",
         [](const json& j) { return (*tile_named(j, "parse"))["stalled_ms"] == 0; }, true},
        {"NODE.rank", "conf/default.yaml --set drop.rank=1", [](const json& j) { return (*node_named(j, "drop"))["rank"] == 1; }},
        {"FARM.rank", "conf/farm.yaml --set rtc.rank=1", [](const json& j) { return (*node_named(j, "rtc.3"))["rank"] == 1; }},
        {"FARM.ranks", "conf/farm.yaml --set rtc.ranks=[1,2]",
         [](const json& j) { return (*node_named(j, "rtc.1"))["rank"] == 2 && (*node_named(j, "rtc.2"))["rank"] == 1; }},
        {"network.queues", udn + "--set network.queues=2", [](const json& j) { return j["networks"][0]["queues"] == 2; }},
        {"network.queue_words", udn + "--set network.queue_words=64", [](const json& j) { return j["networks"][0]["queue_words"] == 64; }},
        {"network.credits", udn + "--set queue=32 --set network.credits=exact",
         [](const json& j) { return j["networks"][0]["credits"] == "exact" && every_channel(j, "capacity", 32); }},
        {"network.catch_all", udn + "--set network.catch_all=shared", [](const json& j) { return j["networks"][0]["catch_all"] == "shared"; }},
    };
}

TEST(Settings, EveryDocumentedSettingTakesEffect) {
    for (const Setting& s : settings()) {
        const json j = s.run ? run_json("run " + s.args) : topo_json(s.args);
        ASSERT_FALSE(j.is_discarded()) << s.args;
        EXPECT_TRUE(s.shows(j)) << s.key << " (" << s.args << ") did not show:\n" << j.dump(1).substr(0, 4000);
    }
}

// README's --set table lists each key by its place; every key it lists has a case above.
TEST(Settings, EveryKeyOfReadmesSetTableIsCovered) {
    std::set<std::string> covered;
    for (const Setting& s : settings()) covered.insert(s.key);
    const std::string readme = read_file(source_root() + "/README.md");
    const auto start = readme.find("  | PATH | sets |");
    ASSERT_NE(start, std::string::npos);
    const auto end = readme.find("\n\n", start);
    std::istringstream table(readme.substr(start, end - start));
    const std::regex cell("`([a-z_]+(\\.[a-z_]+)?)`");
    size_t keys = 0;
    for (std::string line; std::getline(table, line);) {
        const auto bar = line.find('|', line.find('|') + 1);
        if (bar == std::string::npos || line.find("---") != std::string::npos || line.find("PATH") != std::string::npos) continue;
        const std::string place = line.substr(line.find('|') + 1, bar - line.find('|') - 1);
        const std::string prefix = place.find("FARM.W/NODE.KEY") != std::string::npos ? "W/NODE."
                                   : place.find("FARM.NODE.KEY") != std::string::npos ? "FARM.NODE."
                                   : place.find("NODE.KEY") != std::string::npos      ? "NODE."
                                   : place.find("FARM.KEY") != std::string::npos      ? "FARM."
                                                                                      : "";
        const std::string sets = line.substr(bar + 1);
        for (std::sregex_iterator it(sets.begin(), sets.end(), cell), e; it != e; ++it, ++keys)
            EXPECT_EQ(covered.count(prefix + (*it)[1].str()), 1u) << "README documents " << prefix << (*it)[1] << " in: " << line;
    }
    EXPECT_GT(keys, 30u);
}

// transport and queue set the link into a node: where a node has none of its own they are
// refused at their place, naming the setting that acts, in the file as on the command line.
TEST(Settings, ALinkSettingWithoutALinkIsRefusedNamingTheOneThatActs) {
    expect_refused("validate conf/firewall.yaml --set fw.flow_table.transport=lock",
                   "tilepipe: --set fw.flow_table.transport=lock: transport sets the link into a node, and 'flow_table' is not "
                   "the first stage of the worker chain of farm 'fw', which runs as one node: its link from the farm's "
                   "emitter takes the first stage's (give it on 'acl') or the farm's\n");
    expect_refused("run conf/map.yaml --set map.parse.queue=64",
                   "tilepipe: --set map.parse.queue=64: queue sets the link into a node, and 'parse' runs in the workers of map "
                   "'map', whose links carry task references: give it on the map\n");
    expect_refused("validate conf/default.yaml --set synth.transport=sm",
                   "tilepipe: --set synth.transport=sm: transport sets the link into a node, and 'synth' is a source: no "
                   "link leads into it\n");
    // One worker's instance: its links are every worker's, set where they act.
    CommandResult r = tilepipe("validate conf/firewall.yaml --set fw.0/flow_table.queue=64");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("; queue is every worker's: --set fw.acl.queue\n"), std::string::npos) << r.err;
    const std::string file = app_file("chain.yaml",
                                      "pipeline:\n  - synth\n  - farm:\n      name: f\n      worker:\n        - pass\n"
                                      "        - { stage: pass, name: second, queue: 64 }\n  - drop\n");
    r = tilepipe("validate " + file);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(file + ":7:47: queue sets the link into a node, and 'second' is not the first stage"), std::string::npos)
        << r.err;
    std::filesystem::remove(file);
}

// A placement error names the override that gave the tile, not the config file; a tile for
// every worker of a farm is refused with advice the command line then takes.
TEST(Settings, TileErrorsNameTheirOverrideAndAdviseWhatIsTaken) {
    const CommandResult r = tilepipe("validate conf/default.yaml --set synth.tile=[99,0]");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("tilepipe: --set synth.tile=[99,0]: cannot place node 'synth': tile [99, 0] is outside the ", 0), 0u)
        << r.err;
    expect_refused("validate conf/firewall.yaml --set topology=epiphany16 --set fw.acl.tile=[3,0]",
                   "tilepipe: --set fw.acl.tile=[3,0]: 'acl' runs on every worker of farm 'fw': one tile cannot hold them "
                   "all; give each worker its own: --set fw.0/acl.tile=[x, y]\n");
    const CommandResult taken = tilepipe("validate conf/firewall.yaml --set topology=epiphany16 --set fw.0/acl.tile=[3,0]");
    EXPECT_EQ(taken.status, 0) << taken.err;
    expect_refused("validate conf/farm.yaml --set topology=epiphany16 --set rtc.1/pass_2.tile=[3,0]",
                   "tilepipe: --set rtc.1/pass_2.tile=[3,0]: 'pass_2' is not the first stage of worker rtc.1's chain, which "
                   "runs as one node on one tile: use --set rtc.1/pass.tile=[x, y]\n");
    expect_refused("validate conf/firewall.yaml --set fw.4/acl.tile=[3,0]",
                   "tilepipe: --set fw.4/acl.tile=[3,0]: farm 'fw' has 4 worker(s), numbered from 0\n");
}

}  // namespace
}  // namespace tp::test
