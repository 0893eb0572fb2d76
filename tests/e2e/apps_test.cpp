// The example apps' outputs, checked against tcpdump and tshark on a shared capture: the
// firewall's verdicts and flow records, flowmon's flow export, l3fwd's routing, TTL, checksums
// and MAC rewrite.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/tshark.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

// A capture with IPv4 TCP and UDP flows, DNS among them, and no tunnels.
std::string capture() { return pcaps_dir() + "/pcpp__example.pcap"; }

// Packets tcpdump (installed by scripts/bootstrap.sh) prints for `expr`; -1 when it cannot read the file.
long tcpdump_count(const std::string& file, const std::string& expr) {
    const CommandResult r = run_command("tcpdump -n -r '" + file + "' '" + expr + "'");
    return r.status == 0 ? static_cast<long>(std::count(r.out.begin(), r.out.end(), '\n')) : -1;
}

std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = tmp_path(name);
    std::ofstream(path) << text;
    return path;
}

// Sum of a per-stage counter over every instance of `stage` in a run report.
uint64_t stage_sum(const nlohmann::json& report, const std::string& stage, const std::string& field) {
    uint64_t n = 0;
    for (const auto& s : report["stages"])
        if (s["stage"] == stage) n += s[field].get<uint64_t>();
    return n;
}

using FlowKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;

// Distinct TCP and UDP flows in a flow_table export (a flow split over workers counts once).
FlowCounts exported_flows(const std::string& path, bool json) {
    std::set<FlowKey> tcp, udp;
    std::ifstream in(path);
    std::string line;
    if (!json) std::getline(in, line);  // header
    while (std::getline(in, line)) {
        FlowKey k;
        if (json) {
            const nlohmann::json j = nlohmann::json::parse(line);
            k = {std::to_string(j["proto"].get<int>()), j["addr_a"], std::to_string(j["port_a"].get<int>()), j["addr_b"],
                 std::to_string(j["port_b"].get<int>())};
        } else {
            std::vector<std::string> f;
            std::istringstream cells(line);
            for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
            if (f.size() < 7) {
                ADD_FAILURE() << "short CSV line: " << line;
                continue;
            }
            k = {f[2], f[3], f[4], f[5], f[6]};
        }
        if (std::get<0>(k) == "6") tcp.insert(k);
        if (std::get<0>(k) == "17") udp.insert(k);
    }
    return FlowCounts{static_cast<long>(tcp.size()), static_cast<long>(udp.size())};
}

// The TCP and UDP conversations in a flow_table export: packets and bytes per 5-tuple, summed
// over its records (a flow exported when idle and again later, or seen by two workers), leaving
// out "period" snapshots, which repeat what a later record counts.
Conversations exported_conversations(const std::string& path, bool json) {
    Conversations c;
    std::ifstream in(path);
    std::string line;
    if (!json) std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::string reason, proto, a, pa, b, pb;
        long packets = 0, bytes = 0;
        if (json) {
            const nlohmann::json j = nlohmann::json::parse(line);
            reason = j["reason"];
            proto = std::to_string(j["proto"].get<int>());
            a = j["addr_a"], b = j["addr_b"];
            pa = std::to_string(j["port_a"].get<int>()), pb = std::to_string(j["port_b"].get<int>());
            packets = j["packets"], bytes = j["bytes"];
        } else {
            std::vector<std::string> f;  // reason,ip_version,proto,addr_a,port_a,addr_b,port_b,packets,bytes,...
            std::istringstream cells(line);
            for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
            if (f.size() < 9) {
                ADD_FAILURE() << "short CSV line: " << line;
                continue;
            }
            reason = f[0], proto = f[2], a = f[3], pa = f[4], b = f[5], pb = f[6];
            packets = std::stol(f[7]), bytes = std::stol(f[8]);
        }
        if (reason == "period" || (proto != "6" && proto != "17")) continue;
        Conversation& conv = c[conversation_key(proto == "6" ? "tcp" : "udp", a + ":" + pa, b + ":" + pb)];
        conv.frames += packets;
        conv.bytes += bytes;
    }
    return c;
}

// One row of tab-separated tshark fields per frame; a field holding several values (an ICMP
// error quoting a header) keeps the outer one.
std::vector<std::vector<std::string>> tshark_fields(const std::string& file, const std::vector<std::string>& fields) {
    std::string cmd = "tshark -n -o ip.check_checksum:TRUE -T fields";
    for (const auto& f : fields) cmd += " -e " + f;
    const CommandResult r = run_command(cmd + " -r '" + file + "'");
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> row;
        std::istringstream cells(line);
        for (std::string c; std::getline(cells, c, '\t');) row.push_back(c.substr(0, c.find(',')));
        row.resize(fields.size());
        rows.push_back(row);
    }
    return rows;
}

TEST(Apps, FirewallVerdictsEqualTcpdumpsAndItsFlowsTsharksConversationsInPacketsAndBytes) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const std::string rules = write_file("fw.rules", "# DNS queries are denied, the rest permitted by default\n"
                                                     "deny proto udp dport 53\n");
    const std::string out = tmp_path("fw.pcap"), flows = tmp_path("fw-flows.csv");
    const nlohmann::json j = run_json("run conf/firewall.yaml --pcap " + capture() + " --set acl.rules=" + rules +
                                      " --set pcap_out.file=" + out + " --set flow_table.export=" + flows);
    ASSERT_FALSE(j.is_discarded());
    const long in = tcpdump_count(capture(), "");
    const long denied = tcpdump_count(capture(), "udp dst port 53");
    ASSERT_GT(denied, 0) << "the capture should hold DNS queries";
    EXPECT_EQ(stage_sum(j, "acl", "drops"), static_cast<uint64_t>(denied));
    EXPECT_EQ(tcpdump_count(out, ""), in - denied);
    EXPECT_EQ(tcpdump_count(out, "udp dst port 53"), 0);
    EXPECT_EQ(j["delivered"].get<long>(), in - denied);
    EXPECT_EQ(j["unaccounted"], 0);
    // The flow table runs after the ACL: its flows are the conversations of what passed.
    const FlowCounts ours = exported_flows(flows, false);
    const FlowCounts theirs = tshark_conversations(out, false);
    EXPECT_EQ(ours.tcp, theirs.tcp);
    EXPECT_EQ(ours.udp, theirs.udp);
    EXPECT_GT(ours.tcp + ours.udp, 0);
    expect_same_conversations(exported_conversations(flows, false), tshark_conversation_table(out, false));
    for (const auto& p : {rules, out, flows}) fs::remove(p);
}

TEST(Apps, FlowmonExportsTsharksConversationsInPacketsAndBytes) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const std::string flows = tmp_path("flowmon.json");
    const nlohmann::json j = run_json("run conf/flowmon.yaml --pcap " + capture() + " --set flow_table.export=" + flows);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["delivered"].get<long>(), tcpdump_count(capture(), ""));
    const FlowCounts ours = exported_flows(flows, true);
    const FlowCounts theirs = tshark_conversations(capture(), false);
    EXPECT_EQ(ours.tcp, theirs.tcp);
    EXPECT_EQ(ours.udp, theirs.udp);
    expect_same_conversations(exported_conversations(flows, true), tshark_conversation_table(capture(), false));
    fs::remove(flows);
}

TEST(Apps, L3fwdRoutesByPrefixDecrementsTtlKeepsChecksumsAndRewritesMacs) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    // Two routed prefixes and no default: everything else is dropped as no_route.
    const std::string routes = write_file("routes.txt", "10.0.0.0/16 1\n212.199.0.0/16 2\n");
    const std::string out = tmp_path("l3fwd.pcap");
    const nlohmann::json j =
        run_json("run conf/l3fwd.yaml --pcap " + capture() + " --loop 1 --set lpm_route.routes=" + routes +
                 " --set lpm_route.default_port=-1 --set 'port_out.device=net_pcap_l3fwd_test,tx_pcap=" + out + "'");
    ASSERT_FALSE(j.is_discarded());
    const std::string routed = "ip and (dst net 10.0.0.0/16 or dst net 212.199.0.0/16)";
    for (const auto& s : j["stages"])
        if (s["stage"] == "lpm_route") {
            EXPECT_EQ(s["drop_reasons"]["no_route"].get<long>(), tcpdump_count(capture(), "ip and not (" + routed + ")"));
            EXPECT_EQ(s["drop_reasons"]["ttl_exceeded"].get<long>(), tcpdump_count(capture(), routed + " and ip[8] <= 1"));
        }
    // Frame by frame, in order: what went in on a routed prefix with a TTL above 1 comes out
    // with the TTL one lower, the IPv4 checksum as valid as it was, and the next hop's MACs.
    const std::vector<std::string> fields{"ip.dst", "ip.ttl", "ip.checksum.status", "eth.src", "eth.dst"};
    std::vector<std::vector<std::string>> expected;
    for (auto row : tshark_fields(capture(), fields)) {
        const bool hit = row[0].rfind("10.0.", 0) == 0 || row[0].rfind("212.199.", 0) == 0;
        if (!hit || std::stoi(row[1]) <= 1) continue;
        row[1] = std::to_string(std::stoi(row[1]) - 1);
        row[3] = "02:00:00:00:00:01";
        row[4] = "02:00:00:00:00:02";
        expected.push_back(row);
    }
    ASSERT_FALSE(expected.empty()) << "the capture should hold routed IPv4 packets";
    const auto got = tshark_fields(out, fields);
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(static_cast<long>(got.size()), tcpdump_count(capture(), routed + " and ip[8] > 1"));
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "frame " << i + 1;
    for (const auto& p : {routes, out}) fs::remove(p);
}

}  // namespace
}  // namespace tp::test
