// The branching example apps (conf/router.yaml, conf/ids_split.yaml) replayed on shared
// captures: each branch's sink receives exactly the packets tcpdump counts for that branch's
// expression, and each router port exactly what its prefix (`dst net`) counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/tcpdump.hpp"

namespace tp::test {
namespace {

uint64_t sink_out(const nlohmann::json& report, const std::string& name) {
    for (const auto& s : report["stages"])
        if (s["name"] == name) return s["out"].get<uint64_t>();
    ADD_FAILURE() << "no stage " << name;
    return 0;
}

class BranchApps : public ::testing::TestWithParam<const char*> {};

TEST_P(BranchApps, EachRouterPortAndBranchSinkGetsWhatTcpdumpCountsForIt) {
    const std::string cap = pcaps_dir() + "/" + GetParam();
    std::string sets;
    for (const char* sink : {"p1", "p2", "p3", "unrouted", "v6"}) sets += std::string(" --set ") + sink + ".file=" + tmp_path(std::string(sink) + ".pcap");
    const nlohmann::json j = run_json("run conf/router.yaml --pcap '" + cap + "'" + sets);
    expect_exact(j);
    // Routed ports: the prefix, with a TTL left to decrement (ttl_exceeded is a counted drop).
    const std::map<std::string, std::string> port = {
        {"p1", "ip and dst net 10.0.0.0/8 and ip[8] > 1"},
        {"p2", "ip and dst net 212.199.0.0/16 and ip[8] > 1"},
        {"p3", "ip and dst net 192.168.0.0/16 and ip[8] > 1"},
        {"unrouted", "ip and not (dst net 10.0.0.0/8 or dst net 212.199.0.0/16 or dst net 192.168.0.0/16)"},
        {"v6", "ip6"},
        {"not_ip", "not ip and not ip6"},
    };
    for (const auto& [sink, expr] : port) EXPECT_EQ(long(sink_out(j, sink)), tcpdump_count(cap, expr)) << sink << ": " << expr;
    EXPECT_GT(sink_out(j, "p1") + sink_out(j, "p2"), 0u);
}

TEST_P(BranchApps, TheIdsKeepsTcpAndUdpApartAsTcpdumpCountsThem) {
    const std::string cap = pcaps_dir() + "/" + GetParam();
    std::string sets;
    for (const char* sink : {"tcp_out", "udp_out"}) sets += std::string(" --set ") + sink + ".file=" + tmp_path(std::string(sink) + ".pcap");
    for (const char* m : {"tcp_match", "udp_match"}) sets += std::string(" --set ") + m + ".alerts=" + tmp_path(std::string(m) + ".jsonl");
    const nlohmann::json j = run_json("run conf/ids_split.yaml --pcap '" + cap + "'" + sets);
    expect_exact(j);
    EXPECT_EQ(long(sink_out(j, "tcp_out")), tcpdump_count(cap, "tcp"));
    EXPECT_EQ(long(sink_out(j, "udp_out")), tcpdump_count(cap, "udp"));
    EXPECT_EQ(long(sink_out(j, "other")), tcpdump_count(cap, "not tcp and not udp"));
}

INSTANTIATE_TEST_SUITE_P(Captures, BranchApps, ::testing::Values("pcpp__example.pcap", "pcpp__DnsPackets.pcap"));

}  // namespace
}  // namespace tp::test

namespace tp::test {
namespace {

TEST(BranchTopo, TopoListsTheEdgesAndWritesTheGraphForGraphviz) {
    const std::string dot = tmp_path("router.dot"), json = tmp_path("router.json");
    const CommandResult r = tilepipe("topo conf/router.yaml --dot " + dot + " --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("edges:\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  l3.ipv4 -> route\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  route.no_route -> unrouted\n"), std::string::npos) << r.out;
    const std::string d = read_file(dot);
    EXPECT_EQ(d.rfind("digraph \"router\" {", 0), 0u) << d;
    EXPECT_NE(d.find("[label=\"port2\"]"), std::string::npos) << d;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    bool found = false;
    for (const auto& e : j["edges"]) found |= e["from"] == "l3" && e["output"] == "ipv6" && e["to"] == "v6";
    EXPECT_TRUE(found) << j["edges"];
    // Graphviz reads it, where installed.
    if (run_command("command -v dot").status == 0) EXPECT_EQ(run_command("dot -Tsvg '" + dot + "' >/dev/null").status, 0);
    // A file it cannot write is refused naming the option that gave it.
    const CommandResult bad = tilepipe("topo conf/router.yaml --dot /nonexistent/x.dot");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("tilepipe: --dot /nonexistent/x.dot: cannot write: "), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tp::test

namespace tp::test {
namespace {

// Field matches read through VLAN tags as tcpdump's `vlan N and ...` does.
TEST(BranchFields, VlanAndEthertypeFieldsCountAsTcpdumpCountsThem) {
    const std::string conf = app_file("fields.yaml",
                                      "pipeline:\n  - stage: pcap\n    file: x.pcap\n  - parse\n  - stage: classify\n"
                                      "    matches: \"tagged: vlan=4093 ethertype=ipv4; qinq: vlan=200 ethertype=arp; v4: ethertype=ipv4\"\n"
                                      "    next: {tagged: t, qinq: q, v4: u, default: rest}\n"
                                      "  - {stage: drop, name: t}\n  - {stage: drop, name: q}\n  - {stage: drop, name: u}\n"
                                      "  - {stage: drop, name: rest}\n");
    for (const char* cap : {"zeek__mixed-vlan-mpls.pcap", "tcpdump__802.1ad_QinQ.pcap"}) {
        SCOPED_TRACE(cap);
        const std::string file = pcaps_dir() + "/" + cap;
        const nlohmann::json j = run_json("run " + conf + " --pcap '" + file + "'");
        expect_exact(j);
        EXPECT_EQ(long(sink_out(j, "t")), tcpdump_count(file, "vlan 4093 and ip"));
        EXPECT_EQ(long(sink_out(j, "q")), tcpdump_count(file, "vlan 200 and vlan and arp"));
        EXPECT_EQ(long(sink_out(j, "u")), tcpdump_count(file, "ip"));
        // The rest by difference: `vlan` in a tcpdump expression moves the offsets of what follows it.
        EXPECT_EQ(long(sink_out(j, "rest")), tcpdump_count(file, "") - long(sink_out(j, "t") + sink_out(j, "q") + sink_out(j, "u")));
    }
}

}  // namespace
}  // namespace tp::test
