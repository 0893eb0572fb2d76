// flow_table: one entry per direction-free 5-tuple with its packets, bytes, times and TCP flags;
// every packet passes; idle flows leave through the export; and on every shared capture the
// source reads, the TCP and UDP flow counts equal tshark's conversation counts.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/wire_length.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/flow_table.hpp"
#include "stages/parse.hpp"
#include "stages/pcap_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/tshark.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;
using Bytes = std::vector<uint8_t>;
using test::FlowCounts;
using test::tshark_available;
using test::tshark_conversations;

// ---- helpers -------------------------------------------------------------------------------

ParamValues params_of(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

MbufPool test_pool(uint32_t mbufs = 4095) { return test::named_pool("flow_test_", {.mbufs = mbufs}); }

void put16(Bytes& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
}
void put32(Bytes& b, uint32_t v) {
    put16(b, static_cast<uint16_t>(v >> 16));
    put16(b, static_cast<uint16_t>(v));
}

constexpr uint32_t kIpA = 0x0a000001;  // 10.0.0.1
constexpr uint32_t kIpB = 0x0a000002;  // 10.0.0.2
constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1;
constexpr uint8_t kSyn = 0x02, kAck = 0x10, kFin = 0x01;

Bytes ethernet(uint16_t ether_type, const Bytes& l3) {
    Bytes b = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a};
    put16(b, ether_type);
    b.insert(b.end(), l3.begin(), l3.end());
    return b;
}

Bytes ipv4(uint32_t src, uint32_t dst, uint8_t proto, const Bytes& l4, uint16_t flags_offset = 0,
           uint16_t id = 0x1234) {
    Bytes b = {0x45, 0};
    put16(b, static_cast<uint16_t>(20 + l4.size()));
    put16(b, id);
    put16(b, flags_offset);
    b.push_back(64);
    b.push_back(proto);
    put16(b, 0);
    put32(b, src);
    put32(b, dst);
    b.insert(b.end(), l4.begin(), l4.end());
    return b;
}

Bytes ipv6(uint8_t last_byte_src, uint8_t last_byte_dst, uint8_t next, const Bytes& rest) {
    Bytes b;
    put32(b, 0x60000000);
    put16(b, static_cast<uint16_t>(rest.size()));
    b.push_back(next);
    b.push_back(64);
    for (const uint8_t last : {last_byte_src, last_byte_dst}) {
        const Bytes addr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last};
        b.insert(b.end(), addr.begin(), addr.end());
    }
    b.insert(b.end(), rest.begin(), rest.end());
    return b;
}

Bytes tcp(uint16_t sport, uint16_t dport, uint8_t flags, size_t data = 0) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put32(b, 1);
    put32(b, 0);
    b.push_back(0x50);
    b.push_back(flags);
    put16(b, 1024);
    put32(b, 0);
    b.resize(b.size() + data, 0x61);
    return b;
}

Bytes udp(uint16_t sport, uint16_t dport, size_t data = 4) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put16(b, static_cast<uint16_t>(8 + data));
    put16(b, 0);
    b.resize(b.size() + data, 0x62);
    return b;
}

rte_mbuf* mbuf_of(MbufPool& pool, const Bytes& frame) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
    EXPECT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size())), frame.data(), frame.size());
    wire_length(m, wire_length_offset()) = m->pkt_len;  // as a source sets it
    return m;
}

// Crafted frames through `parse` and then `stage`, in bursts of up to 32; returns how many
// came out (each freed).
uint64_t push(Stage& stage, MbufPool& pool, const std::vector<Bytes>& frames) {
    Parse parse(params_of("parse", {}));
    uint64_t out = 0;
    for (size_t at = 0; at < frames.size(); at += kBurstMax) {
        Burst b;
        for (size_t i = at; i < frames.size() && b.n < kBurstMax; ++i) {
            rte_mbuf* m = mbuf_of(pool, frames[i]);
            b.d[b.n++] = PacketDesc{m, 0, saturate_length(rte_pktmbuf_pkt_len(m)), 0, 0};
        }
        parse.process(b);
        stage.process(b);
        out += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    return out;
}

uint64_t event(const Stage& s, const std::string& name) {
    const auto& names = s.events();
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it == names.end() ? 0 : s.stats().event[it - names.begin()].get();
}

std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> lines;
    std::istringstream in(test::read_file(path));
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

class FlowTableTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_flow_table"};
    const std::string dir_ = scratch_.path();

    MbufPool pool_ = test_pool();
    StageEnv env_{&pool_, "flows", 0};
};

// ---- registration --------------------------------------------------------------------------

TEST(FlowTableRegistration, IsAProcessorWithDocumentedParameters) {
    const StageInfo* info = StageRegistry::instance().find("flow_table");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    for (const char* name : {"capacity", "idle_timeout", "export", "format", "period"}) {
        ASSERT_NE(info->find_param(name), nullptr) << name;
        EXPECT_FALSE(info->find_param(name)->help.empty()) << name;
    }
    EXPECT_EQ(info->find_param("format")->choices, (std::vector<std::string>{"csv", "json"}));
    EXPECT_GT(info->memory_hint(params_of("flow_table", {{"capacity", "1000000"}})), 1000000u * 40);
}

// ---- accounting ----------------------------------------------------------------------------

TEST_F(FlowTableTest, BothDirectionsOfAConnectionAreOneFlowWithFlagsOred) {
    FlowTable t(params_of("flow_table", {}));
    t.open(env_);
    const std::vector<Bytes> frames = {
        ethernet(0x0800, ipv4(kIpA, kIpB, kTcp, tcp(40000, 80, kSyn))),
        ethernet(0x0800, ipv4(kIpB, kIpA, kTcp, tcp(80, 40000, kSyn | kAck))),
        ethernet(0x0800, ipv4(kIpA, kIpB, kTcp, tcp(40000, 80, kAck, 100))),
        ethernet(0x0800, ipv4(kIpA, kIpB, kTcp, tcp(40000, 80, kFin | kAck))),
    };
    EXPECT_EQ(push(t, pool_, frames), 4u) << "every packet passes";
    const std::vector<Flow> flows = t.flows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(FlowTable::key_text(flows[0].key), "4,6,10.0.0.1,40000,10.0.0.2,80");
    EXPECT_EQ(flows[0].stats.packets, 4u);
    uint64_t bytes = 0;
    for (const Bytes& f : frames) bytes += f.size();
    EXPECT_EQ(flows[0].stats.bytes, bytes);
    EXPECT_EQ(flows[0].stats.tcp_flags, kSyn | kAck | kFin);
    EXPECT_LE(flows[0].stats.first_tsc, flows[0].stats.last_tsc);
    EXPECT_EQ(event(t, "new_flow"), 1u);
    t.close();
}

TEST_F(FlowTableTest, TheLowerEndpointIsAEvenWhenTheServerSpeaksFirst) {
    FlowTable t(params_of("flow_table", {}));
    t.open(env_);
    push(t, pool_, {ethernet(0x0800, ipv4(kIpB, kIpA, kUdp, udp(53, 5353))),
                    ethernet(0x0800, ipv4(kIpA, kIpA, kUdp, udp(9, 7))),
                    ethernet(0x0800, ipv4(kIpA, kIpA, kUdp, udp(7, 9)))});
    std::set<std::string> keys;
    for (const Flow& f : t.flows()) keys.insert(FlowTable::key_text(f.key));
    EXPECT_EQ(keys, (std::set<std::string>{"4,17,10.0.0.1,5353,10.0.0.2,53", "4,17,10.0.0.1,7,10.0.0.1,9"}));
    t.close();
}

TEST_F(FlowTableTest, Ipv6FlowsAreKeyedByTheirFullAddressesAndTheUpperLayerProtocol) {
    FlowTable t(params_of("flow_table", {}));
    t.open(env_);
    // A destination-options header sits between IPv6 and UDP.
    Bytes dest_opts = {kUdp, 0, 1, 4, 0, 0, 0, 0};
    const Bytes u = udp(1000, 2000);
    dest_opts.insert(dest_opts.end(), u.begin(), u.end());
    push(t, pool_, {ethernet(0x86dd, ipv6(2, 1, 60, dest_opts)), ethernet(0x86dd, ipv6(1, 2, kUdp, udp(2000, 1000)))});
    const std::vector<Flow> flows = t.flows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(FlowTable::key_text(flows[0].key), "6,17,2001:db8::1,2000,2001:db8::2,1000");
    EXPECT_EQ(flows[0].stats.packets, 2u);
    t.close();
}

TEST_F(FlowTableTest, PortlessProtocolsAreFlowsOfTheirAddresses) {
    FlowTable t(params_of("flow_table", {}));
    t.open(env_);
    const Bytes echo = {8, 0, 0, 0, 0, 1, 0, 1};
    push(t, pool_, {ethernet(0x0800, ipv4(kIpA, kIpB, kIcmp, echo)), ethernet(0x0800, ipv4(kIpB, kIpA, kIcmp, echo))});
    const std::vector<Flow> flows = t.flows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(FlowTable::key_text(flows[0].key), "4,1,10.0.0.1,0,10.0.0.2,0");
    t.close();
}

TEST_F(FlowTableTest, NonIpAndUnreadableTransportHeadersAreCountedAndPassed) {
    FlowTable t(params_of("flow_table", {}));
    t.open(env_);
    const Bytes arp(28, 0);
    Bytes cut = ethernet(0x0800, ipv4(kIpA, kIpB, kTcp, tcp(1, 2, kSyn)));
    cut.resize(14 + 20 + 10);  // TCP header cut after 10 bytes
    EXPECT_EQ(push(t, pool_, {ethernet(0x0806, arp), cut}), 2u);
    EXPECT_EQ(t.flow_count(), 0u);
    EXPECT_EQ(event(t, "non_ip"), 1u);
    EXPECT_EQ(event(t, "bad_l4"), 1u);
    t.close();
}

TEST_F(FlowTableTest, LaterFragmentsJoinTheFlowOfTheirFirstFragment) {
    FlowTable t(params_of("flow_table", {}));
    t.open(env_);
    const Bytes first = ipv4(kIpA, kIpB, kUdp, udp(5000, 53, 16), 0x2000, 77);  // MF, offset 0
    const Bytes second = ipv4(kIpA, kIpB, kUdp, Bytes(24, 0x63), 3, 77);       // offset 24 bytes
    const Bytes stray = ipv4(kIpA, kIpB, kUdp, Bytes(24, 0x63), 3, 78);        // its first never came
    EXPECT_EQ(push(t, pool_, {ethernet(0x0800, first), ethernet(0x0800, second), ethernet(0x0800, stray)}), 3u);
    const std::vector<Flow> flows = t.flows();
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(FlowTable::key_text(flows[0].key), "4,17,10.0.0.1,5000,10.0.0.2,53");
    EXPECT_EQ(flows[0].stats.packets, 2u);
    EXPECT_EQ(event(t, "fragment_unmatched"), 1u);
    t.close();
}

TEST_F(FlowTableTest, AFullTableCountsNewFlowsButStillCountsKnownOnesAndPassesAll) {
    FlowTable t(params_of("flow_table", {{"capacity", "4"}}));
    t.open(env_);
    std::vector<Bytes> frames;
    for (uint16_t port = 1; port <= 6; ++port) frames.push_back(ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(port, 9))));
    frames.push_back(frames[0]);
    EXPECT_EQ(push(t, pool_, frames), 7u);
    EXPECT_EQ(t.flow_count(), 4u);
    EXPECT_EQ(event(t, "table_full"), 2u);
    uint64_t packets = 0;
    for (const Flow& f : t.flows()) packets += f.stats.packets;
    EXPECT_EQ(packets, 5u);
    t.close();
}

// ---- export --------------------------------------------------------------------------------

TEST_F(FlowTableTest, CloseExportsEveryFlowAsCsv) {
    const std::string path = dir_ + "/flows.csv";
    FlowTable t(params_of("flow_table", {{"export", path}}));
    t.open(env_);
    push(t, pool_, {ethernet(0x0800, ipv4(kIpA, kIpB, kTcp, tcp(40000, 80, kSyn))),
                    ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(5353, 5353)))});
    const auto before = std::chrono::system_clock::now().time_since_epoch();
    t.close();
    const std::vector<std::string> lines = lines_of(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "reason,ip_version,proto,addr_a,port_a,addr_b,port_b,packets,wire_bytes,first_ns,last_ns,tcp_flags");
    std::set<std::string> rows(lines.begin() + 1, lines.end());
    bool tcp_seen = false;
    for (const std::string& row : rows) {
        std::vector<std::string> f;
        std::stringstream ss(row);
        for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
        ASSERT_EQ(f.size(), 12u) << row;
        EXPECT_EQ(f[0], "end");
        const uint64_t first_ns = std::stoull(f[9]);
        const uint64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(before).count();
        EXPECT_LE(first_ns, now_ns + 1000000);
        EXPECT_GT(first_ns, now_ns - 60000000000ull) << "first seen is wall-clock time, in ns";
        if (f[2] == "6") {
            tcp_seen = true;
            EXPECT_EQ(std::vector<std::string>(f.begin(), f.begin() + 7),
                      (std::vector<std::string>{"end", "4", "6", "10.0.0.1", "40000", "10.0.0.2", "80"}));
            EXPECT_EQ(f[7], "1");
            EXPECT_EQ(f[8], "54");
            EXPECT_EQ(f[11], "2");
        }
    }
    EXPECT_TRUE(tcp_seen);
}

TEST_F(FlowTableTest, JsonExportHasOneObjectPerFlow) {
    const std::string path = dir_ + "/flows.jsonl";
    FlowTable t(params_of("flow_table", {{"export", path}, {"format", "json"}}));
    t.open(env_);
    push(t, pool_, {ethernet(0x86dd, ipv6(1, 2, kTcp, tcp(443, 50000, kAck, 10)))});
    t.close();
    const std::vector<std::string> lines = lines_of(path);
    ASSERT_EQ(lines.size(), 1u);
    const nlohmann::json j = nlohmann::json::parse(lines[0]);
    EXPECT_EQ(j["reason"], "end");
    EXPECT_EQ(j["ip_version"], 6);
    EXPECT_EQ(j["proto"], 6);
    EXPECT_EQ(j["addr_a"], "2001:db8::1");
    EXPECT_EQ(j["port_a"], 443);
    EXPECT_EQ(j["addr_b"], "2001:db8::2");
    EXPECT_EQ(j["port_b"], 50000);
    EXPECT_EQ(j["packets"], 1);
    EXPECT_EQ(j["wire_bytes"], 14 + 40 + 20 + 10);
    EXPECT_EQ(j["tcp_flags"], kAck);
    EXPECT_LE(j["first_ns"].get<uint64_t>(), j["last_ns"].get<uint64_t>());
}

TEST_F(FlowTableTest, IdleFlowsAreExportedAndRemovedWhileBusyOnesStay) {
    const std::string path = dir_ + "/idle.csv";
    FlowTable t(params_of("flow_table", {{"export", path}, {"idle_timeout", "0.4"}, {"capacity", "16"}}));
    t.open(env_);
    const Bytes quiet = ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(1, 2)));
    const Bytes busy = ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(3, 4)));
    push(t, pool_, {quiet, busy});
    // The busy flow sends every 10 ms (a loaded machine may stretch that, but hardly to 0.4 s);
    // each burst also sweeps the small table.
    uint64_t busy_packets = 1;
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(600)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        push(t, pool_, {busy});
        ++busy_packets;
    }
    EXPECT_EQ(t.flow_count(), 1u);
    EXPECT_EQ(event(t, "expired"), 1u);
    ASSERT_EQ(t.flows().size(), 1u);
    EXPECT_EQ(t.flows()[0].key.port_a, 3);
    t.close();
    const std::vector<std::string> lines = lines_of(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[1].rfind("idle,4,17,10.0.0.1,1,10.0.0.2,2,1,", 0), 0u) << lines[1];
    EXPECT_EQ(lines[2].rfind("end,4,17,10.0.0.1,3,10.0.0.2,4," + std::to_string(busy_packets) + ",", 0), 0u) << lines[2];
}

TEST_F(FlowTableTest, APeriodWritesSnapshotsOfLiveFlows) {
    const std::string path = dir_ + "/period.csv";
    FlowTable t(params_of("flow_table", {{"export", path}, {"period", "0.1"}}));
    t.open(env_);
    const Bytes f = ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(1, 2)));
    push(t, pool_, {f, f});
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    push(t, pool_, {f});  // a period has passed: this burst writes a snapshot
    std::vector<std::string> lines = lines_of(path);
    ASSERT_GE(lines.size(), 2u) << "the snapshot is in the file before the end";
    EXPECT_EQ(lines.back().rfind("period,4,17,10.0.0.1,1,10.0.0.2,2,3,", 0), 0u) << lines.back();
    t.close();
    lines = lines_of(path);
    for (size_t i = 1; i + 1 < lines.size(); ++i) EXPECT_EQ(lines[i].rfind("period,", 0), 0u) << lines[i];
    EXPECT_EQ(lines.back().rfind("end,4,17,10.0.0.1,1,10.0.0.2,2,3,", 0), 0u) << lines.back();
}

TEST_F(FlowTableTest, InstancesExportingToOnePathShareOneFile) {
    // What a farm's workers do: each has its own table, all write one export.
    const std::string path = dir_ + "/farm.csv";
    FlowTable w0(params_of("flow_table", {{"export", path}}));
    FlowTable w1(params_of("flow_table", {{"export", path}}));
    w0.open(env_);
    w1.open(env_);
    push(w0, pool_, {ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(1, 2)))});
    push(w1, pool_, {ethernet(0x0800, ipv4(kIpA, kIpB, kUdp, udp(3, 4)))});
    w0.close();
    w1.close();
    const std::vector<std::string> lines = lines_of(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].rfind("reason,", 0), 0u);
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("end,", 0) == 0; }), 2);
}

TEST_F(FlowTableTest, AnUnwritableExportIsRefusedAtItsParameter) {
    FlowTable t(params_of("flow_table", {{"export", dir_ + "/no/such/dir/flows.csv"}}));
    try {
        t.open(env_);
        FAIL() << "open() accepted an export path in a missing directory";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 2);
        EXPECT_NE(e.message().find("cannot write flow export"), std::string::npos) << e.what();
    }
}

TEST(FlowTableParams, OutOfRangeValuesAreRefusedAtTheirParameter) {
    EXPECT_THROW(FlowTable(params_of("flow_table", {{"capacity", "0"}})), LocatedError);
    EXPECT_THROW(FlowTable(params_of("flow_table", {{"idle_timeout", "-1"}})), LocatedError);
    EXPECT_THROW(FlowTable(params_of("flow_table", {{"period", "-0.5"}})), LocatedError);
}

// ---- the tshark oracle ---------------------------------------------------------------------
//
// tshark's conversation tables (`-z conv,tcp`, `-z conv,udp`) list address/port pairs
// regardless of direction, IPv4 and IPv6 alike; fragments are reassembled (one conversation);
// the packet quoted inside an ICMP error is not a conversation. flow_table keys on the same
// pairs and matches that on every capture, with one difference it does not reconcile: tshark
// also dissects tunnels (VXLAN, Geneve, GRE, MPLS, PPPoE) and counts the inner conversations,
// while `parse`, and so flow_table, sees only the outer headers. So the oracle is tshark with
// those tunnel dissectors disabled, and plain tshark may differ only on the captures listed in
// kTunnelCaptures, exactly by the inner conversations.


// Captures with IP fragments: tshark's table counts a reassembled datagram once (on the frame
// that completes it), flow_table every fragment; there the oracle is tshark's per-frame view
// with each datagram's fragments counted (tshark_conversations_counting_fragments).
const std::set<std::string> kFragmentCaptures = {
    "pcpp__ip4_fragments.pcap",
    "zeek__ipv6-fragmented-dns.pcap",
};

// The capture's link type (DLT), -1 when libpcap cannot read it.
int link_type_of(const std::string& path) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    if (p == nullptr) return -1;
    const int dlt = pcap_datalink(p);
    pcap_close(p);
    return dlt;
}

// Captures tshark cannot read to the end: the source replays what comes before the damage.
const std::map<std::string, std::string> kDamagedCaptures = {
    {"scapy__bad_rsn_parsing_overrides_ssid.pcap", "cut short in the middle of a packet"},
    {"suricata__fuzz.pcap", "a record of 16711424 bytes: damaged"},
};
// pcapng captures whose interfaces have different link types: link headers differ per frame.
const std::set<std::string> kMultiLinkCaptures = {"pcpp__pcapng-example.pcapng"};

const std::set<std::string> kTunnelCaptures = {
    "tcpdump__mpls-traceroute.pcap",       // UDP and ICMP inside MPLS over PPP
    "zeek__vxlan-encapsulated-http.pcap",  // HTTP/TCP inside VXLAN
    "tcpdump__geneve.pcap",                // SSH/TCP inside Geneve
    "zeek__mixed-vlan-mpls.pcap",          // a TCP session inside MPLS
    "zeek__pppoe.pcap",                    // DHCPv6/UDP inside PPPoE sessions
};

// The flow table's TCP and UDP flows as conversations: packets and bytes per 5-tuple.
test::Conversations as_conversations(const std::vector<Flow>& flows) {
    test::Conversations c;
    for (const Flow& f : flows) {
        if (f.key.proto != 6 && f.key.proto != 17) continue;
        std::vector<std::string> k;  // version, proto, addr_a, port_a, addr_b, port_b
        std::istringstream cells(FlowTable::key_text(f.key));
        for (std::string cell; std::getline(cells, cell, ',');) k.push_back(cell);
        const std::string key = test::conversation_key(f.key.proto == 6 ? "tcp" : "udp", k[2] + ":" + k[3], k[4] + ":" + k[5]);
        c[key] = test::Conversation{long(f.stats.packets), long(f.stats.bytes), 1};
    }
    return c;
}

struct TableView {
    FlowCounts counts;
    test::Conversations conversations;
};

// pcap -> parse -> flow_table over the whole capture; nullopt when the source refuses it.
std::optional<TableView> flow_table_counts(const std::string& path) {
    PcapSource src(params_of("pcap", {{"file", path}}));
    MbufPool pool = test_pool(8191);
    StageEnv env{&pool, "src", 0};
    try {
        src.open(env);
    } catch (const LocatedError&) {
        return std::nullopt;
    }
    Parse parse(params_of("parse", {}));
    FlowTable table(params_of("flow_table", {{"capacity", "1000000"}}));
    table.open(env);
    uint64_t in = 0, out = 0;
    Burst b;
    for (;;) {
        b.n = 0;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        if (st == SourceStatus::Idle) continue;
        in += b.n;
        parse.process(b);
        table.process(b);
        out += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    EXPECT_EQ(in, out) << "flow_table dropped packets";
    TableView v;
    const std::vector<Flow> flows = table.flows();
    for (const Flow& f : flows) {
        if (f.key.proto == 6) ++v.counts.tcp;
        if (f.key.proto == 17) ++v.counts.udp;
    }
    v.conversations = as_conversations(flows);
    table.close();
    src.close();
    return v;
}


class FlowsOfCapture : public testing::TestWithParam<std::string> {};

TEST_P(FlowsOfCapture, TcpAndUdpFlowsEqualTsharksConversationsInPacketsAndBytes) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const std::string name = GetParam();
    const std::string path = test::pcaps_dir() + "/" + name;
    const std::optional<TableView> ours = flow_table_counts(path);
    if (!ours) GTEST_SKIP() << "the pcap source refuses " << name;
    if (kDamagedCaptures.count(name) != 0)
        GTEST_SKIP() << "tshark stops on " << name << " with an error (" << kDamagedCaptures.at(name)
                     << "): no conversation table to compare with";
    // Bytes differ by the link header the pcap source swaps for Ethernet, per frame.
    const long extra = kMultiLinkCaptures.count(name) != 0 ? test::kBytesVaryPerFrame
                                                            : test::normalised_bytes_per_frame(link_type_of(path));
    const bool fragments = kFragmentCaptures.count(name) != 0;
    {
        SCOPED_TRACE("tshark -z conv,tcp -z conv,udp, tunnels not dissected");
        test::expect_same_conversations(ours->conversations,
                                        fragments ? test::tshark_conversations_counting_fragments(path)
                                                  : test::tshark_conversation_table(path, false),
                                        extra);
    }
    const FlowCounts outer = tshark_conversations(path, false);
    EXPECT_EQ(ours->counts.tcp, outer.tcp) << "TCP flows vs tshark -z conv,tcp (tunnels not dissected)";
    EXPECT_EQ(ours->counts.udp, outer.udp) << "UDP flows vs tshark -z conv,udp (tunnels not dissected)";

    const FlowCounts all = tshark_conversations(path, true);
    if (kTunnelCaptures.count(name) != 0) {
        EXPECT_GT(all.tcp + all.udp, outer.tcp + outer.udp) << "listed as a tunnel capture, but tshark finds nothing inside";
    } else {
        SCOPED_TRACE("plain tshark -z conv,tcp -z conv,udp");
        if (!fragments) test::expect_same_conversations(ours->conversations, test::tshark_conversation_table(path, true), extra);
    }
}

std::string test_name_of(const testing::TestParamInfo<std::string>& info) {
    std::string n = info.param;
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(Pcaps, FlowsOfCapture, testing::ValuesIn(test::shared_capture_names()), test_name_of);

}  // namespace
}  // namespace tp
