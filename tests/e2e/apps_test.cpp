// The example apps' outputs, checked against tcpdump and tshark on a shared capture: the
// firewall's verdicts and flow records, flowmon's flow export, l3fwd's routing to ports, TTL,
// checksums and per-port MACs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/tcpdump.hpp"
#include "tests/support/tshark.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

// A capture with IPv4 TCP and UDP flows, DNS among them, and no tunnels.
std::string capture() { return pcaps_dir() + "/pcpp__example.pcap"; }

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
            packets = j["packets"], bytes = j["wire_bytes"];
        } else {
            std::vector<std::string> f;  // reason,ip_version,proto,addr_a,port_a,addr_b,port_b,packets,wire_bytes,...
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

// The l3fwd tests' routes: nested prefixes, so that longest-prefix precedence decides, and a
// default route. Each port's share of a capture, written as tcpdump filters from this table by
// hand (a longer prefix takes its addresses from the shorter one holding it).
const char* const kL3fwdRoutes = "0.0.0.0/0          0\n"
                                 "10.0.0.0/16        1\n"
                                 "10.0.0.0/29        2\n"
                                 "212.199.0.0/16     3\n"
                                 "212.199.202.0/24   1\n";
const std::vector<std::string> kL3fwdPortFilters = {
    "ip and not (dst net 10.0.0.0/16 or dst net 212.199.0.0/16)",
    "ip and ((dst net 10.0.0.0/16 and not dst net 10.0.0.0/29) or dst net 212.199.202.0/24)",
    "ip and dst net 10.0.0.0/29",
    "ip and dst net 212.199.0.0/16 and not dst net 212.199.202.0/24",
};
// conf/l3fwd.yaml's MACs: port P sends from 02:00:00:00:00:1P to its next hop 02:00:00:00:00:2P.
std::string l3fwd_mac(int base, size_t port) { return "02:00:00:00:00:" + std::to_string(base + int(port)); }

// Checks that port `port`'s output `out` holds, frame by frame and in order, what the capture
// routes to that port (TTL above 1), with the TTL one lower, the IPv4 checksum as valid as it
// was and the port's MACs.
void expect_port_output(const std::string& out, size_t port) {
    SCOPED_TRACE("port " + std::to_string(port) + ": " + out);
    const std::string mine = tmp_path("l3fwd-expected.pcap");
    ASSERT_EQ(run_command("tcpdump -r '" + capture() + "' -w '" + mine + "' '(" + kL3fwdPortFilters[port] +
                          ") and ip[8] > 1'").status, 0);
    const std::vector<std::string> fields{"ip.dst", "ip.ttl", "ip.checksum.status", "eth.src", "eth.dst"};
    std::vector<std::vector<std::string>> expected;
    for (auto row : tshark_fields(mine, fields)) {
        row[1] = std::to_string(std::stoi(row[1]) - 1);
        row[3] = l3fwd_mac(10, port);
        row[4] = l3fwd_mac(20, port);
        expected.push_back(row);
    }
    fs::remove(mine);
    const auto got = tshark_fields(out, fields);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "frame " << i + 1;
}

// What the capture sends to each port, by tcpdump: routed there with a TTL above 1.
std::vector<long> l3fwd_port_counts() {
    std::vector<long> n;
    for (const auto& f : kL3fwdPortFilters) n.push_back(tcpdump_count(capture(), "(" + f + ") and ip[8] > 1"));
    return n;
}

// The `ports` block of the report for the stage named `stage`, port -> packets.
std::map<long, long> reported_ports(const nlohmann::json& report, const std::string& stage) {
    std::map<long, long> ports;
    for (const auto& s : report["stages"])
        if (s["stage"] == stage && s.contains("ports"))
            for (const auto& p : s["ports"]) ports[p["port"].get<long>()] += p["packets"].get<long>();
    return ports;
}

TEST(Apps, L3fwdSendsEachPacketOnThePortItsLongestPrefixNamesWithThatPortsMacs) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const std::string routes = write_file("routes.txt", kL3fwdRoutes);
    std::vector<std::string> outs;
    std::string devices;
    for (size_t p = 0; p < kL3fwdPortFilters.size(); ++p) {
        outs.push_back(tmp_path("l3fwd-port" + std::to_string(p) + ".pcap"));
        devices += (p != 0 ? ", " : "") + std::string("net_pcap_l3fwd") + std::to_string(p) + ",tx_pcap=" + outs[p];
    }
    const nlohmann::json j = run_json("run conf/l3fwd.yaml --pcap " + capture() + " --loop 1 --set lpm_route.routes=" +
                                      routes + " --set 'port_out.devices=" + devices + "'");
    ASSERT_FALSE(j.is_discarded());
    const std::vector<long> want = l3fwd_port_counts();
    for (size_t p = 0; p < want.size(); ++p) ASSERT_GT(want[p], 0) << "the capture should reach port " << p;
    // Per port: the report's count, the device's file, and every frame in it.
    const std::map<long, long> reported = reported_ports(j, "port_out");
    ASSERT_EQ(reported.size(), want.size());
    for (size_t p = 0; p < want.size(); ++p) {
        EXPECT_EQ(reported.at(long(p)), want[p]) << "port " << p;
        EXPECT_EQ(tcpdump_count(outs[p], ""), want[p]) << "port " << p;
        expect_port_output(outs[p], p);
    }
    // Everything else is accounted: not IP, or TTL 1 or 0; no route misses with a default.
    for (const auto& s : j["stages"])
        if (s["stage"] == "lpm_route") {
            EXPECT_EQ(s["drop_reasons"]["not_ip"].get<long>(), tcpdump_count(capture(), "not ip"));
            EXPECT_EQ(s["drop_reasons"]["ttl_exceeded"].get<long>(), tcpdump_count(capture(), "ip and ip[8] <= 1"));
            EXPECT_EQ(s["drop_reasons"]["no_route"].get<long>(), 0);
        }
    EXPECT_EQ(stage_sum(j, "port_out", "drops"), 0u);
    EXPECT_EQ(j["delivered"].get<long>(), want[0] + want[1] + want[2] + want[3]);
    EXPECT_EQ(j["unaccounted"], 0);
    for (const auto& p : outs) fs::remove(p);
    fs::remove(routes);
}

TEST(Apps, L3fwdIntoPcapOutSplitByPortWritesACapturePerPortAndPortsWithoutADeviceAreNoPortDrops) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const std::string routes = write_file("routes.txt", kL3fwdRoutes);
    const std::string dir = tmp_path("l3fwd-split");
    fs::create_directories(dir);
    // The shipped app's stages with a pcap_out per port instead of devices.
    const std::string app = write_file("l3fwd-split.yaml",
                                       "app: l3fwd-split\n"
                                       "pipeline:\n"
                                       "  - { stage: pcap, name: src, file: " + capture() + " }\n"
                                       "  - stage: parse\n"
                                       "  - { stage: lpm_route, routes: " + routes + " }\n"
                                       "  - stage: rewrite\n"
                                       "    port_macs: 02:00:00:00:00:10, 02:00:00:00:00:11, 02:00:00:00:00:12, 02:00:00:00:00:13\n"
                                       "    next_hop_macs: 02:00:00:00:00:20, 02:00:00:00:00:21, 02:00:00:00:00:22, 02:00:00:00:00:23\n"
                                       "  - { stage: pcap_out, file: " + dir + "/port%p.pcap }\n");
    const nlohmann::json j = run_json("run " + app);
    ASSERT_FALSE(j.is_discarded());
    const std::vector<long> want = l3fwd_port_counts();
    const std::map<long, long> reported = reported_ports(j, "pcap_out");
    ASSERT_EQ(reported.size(), want.size());
    for (size_t p = 0; p < want.size(); ++p) {
        const std::string out = dir + "/port" + std::to_string(p) + ".pcap";
        EXPECT_EQ(reported.at(long(p)), want[p]) << "port " << p;
        EXPECT_EQ(tcpdump_count(out, ""), want[p]) << "port " << p;
        expect_port_output(out, p);
    }
    EXPECT_EQ(j["unaccounted"], 0);

    // The same app sending on two devices: ports 2 and 3 have none, their packets are no_port drops.
    const nlohmann::json two = run_json("run conf/l3fwd.yaml --pcap " + capture() + " --set lpm_route.routes=" + routes +
                                        " --set 'port_out.devices=net_null_l3fwd0, net_null_l3fwd1'");
    ASSERT_FALSE(two.is_discarded());
    for (const auto& s : two["stages"])
        if (s["stage"] == "port_out") EXPECT_EQ(s["drop_reasons"]["no_port"].get<long>(), want[2] + want[3]);
    const std::map<long, long> sent = reported_ports(two, "port_out");
    EXPECT_EQ(sent, (std::map<long, long>{{0, want[0]}, {1, want[1]}}));
    EXPECT_EQ(two["unaccounted"], 0);
    fs::remove_all(dir);
    for (const auto& p : {routes, app}) fs::remove(p);
}

TEST(Apps, L3fwdPortMistakesAreRefusedByValidateAndRunWithTheirPlaceAndExit2) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"rewrite.port_macs=02:00:00:00:00:10,02:00:00:00:00:1x",
         "--set rewrite.port_macs=02:00:00:00:00:10,02:00:00:00:00:1x: 'port_macs' port 1: '02:00:00:00:00:1x' is not a MAC address"},
        {"rewrite.next_hop_macs=02:00:00:00:00:20",
         "--set rewrite.next_hop_macs=02:00:00:00:00:20: 'next_hop_macs' lists 1 ports but 'port_macs' 5"},
        {"rewrite.src_mac=02:00:00:00:00:01", "conf/l3fwd.yaml:21:16: 'src_mac' and 'port_macs' both set the source MAC"},
        {"port_out.devices=net_null0,,net_null1", "--set port_out.devices=net_null0,,net_null1: 'devices' word 2 is empty"},
        {"port_out.device=net_null0", "conf/l3fwd.yaml:24:14: 'device' and 'devices' both name where packets go"},
    };
    for (const auto& [set, message] : cases) {
        for (const char* command : {"validate", "run"}) {
            SCOPED_TRACE(std::string(command) + " --set " + set);
            const CommandResult r = tilepipe(std::string(command) + " conf/l3fwd.yaml --set '" + set + "'");
            EXPECT_EQ(r.status, 2);
            EXPECT_NE(r.err.find("tilepipe: " + message), std::string::npos) << r.err;
        }
    }
}

// Two processes joined by memif (conf/memif_tx.yaml, conf/memif_rx.yaml), the receiver started
// first as a user might: each side's report is exact, and what one transmitted the other
// delivered, every packet.
TEST(Apps, TheMemifPairPassesEveryPacketFromOneProcessToTheOther) {
    const std::string sock = tmp_path("memif.sock");
    std::remove(sock.c_str());
    auto side = [&](const std::string& conf, const std::string& name, const std::string& set) {
        const std::string json = tmp_path(name + ".json");
        const CommandResult r = tilepipe("run " + conf + " --quiet --json " + json + " --eal '--file-prefix tp_" + name +
                                         "' " + set);
        EXPECT_EQ(r.status, 0) << name << ": " << r.err;
        nlohmann::json j = nlohmann::json::parse(read_file(json), nullptr, false);
        std::filesystem::remove(json);
        return j;
    };
    nlohmann::json rx;
    std::thread receiver([&] {
        rx = side("conf/memif_rx.yaml", "memif_rx",
                  "--set port.packets=50000 --set port.idle_timeout=5 --set 'port.device=net_memif0,role=client,socket=" + sock + "'");
    });
    const nlohmann::json tx = side("conf/memif_tx.yaml", "memif_tx",
                                   "--set synth.count=50000 --set 'port_out.device=net_memif0,role=server,socket=" + sock + "'");
    receiver.join();
    ASSERT_TRUE(tx.is_object() && rx.is_object());
    expect_exact(tx);
    expect_exact(rx);
    EXPECT_EQ(tx["delivered"], 50000);
    EXPECT_EQ(tx["drops"], 0);
    EXPECT_EQ(rx["delivered"], 50000);
}

}  // namespace
}  // namespace tp::test
