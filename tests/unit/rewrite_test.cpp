// rewrite: what a user relies on — the fields asked for are set, the IPv4 header checksum and
// the TCP/UDP checksum are what DPDK's rte_ipv4_cksum / rte_ipv4_udptcp_cksum would compute
// afterwards (rte_ipv6_udptcp_cksum for IPv6), packets that lack a field (non-IP, the other
// family for an address, ICMP for ports) keep everything but their MAC addresses, and a rules
// file rewrites each packet by its first matching rule.

// rte_ipv4_udptcp_cksum_verify and its IPv6 twin are still experimental in DPDK 22.11.
#ifndef ALLOW_EXPERIMENTAL_API
#define ALLOW_EXPERIMENTAL_API
#endif

#include <gtest/gtest.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "framework/capture/capture_file.hpp"
#include "stages/parse.hpp"
#include "stages/rewrite.hpp"
#include "framework/rules/rule_file.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/stage_params.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;
using Bytes = std::vector<uint8_t>;

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1;
constexpr size_t kEth = 14;

// ---- packets ---------------------------------------------------------------------------------

void put16(Bytes& b, uint16_t v) {
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}
void put(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

Bytes address_bytes(const char* text) {
    IpPrefix p;
    std::string why;
    EXPECT_TRUE(parse_ip_prefix(text, p, why)) << why;
    if (p.ipv6) return Bytes(p.v6.begin(), p.v6.end());
    return {uint8_t(p.v4 >> 24), uint8_t(p.v4 >> 16), uint8_t(p.v4 >> 8), uint8_t(p.v4)};
}

const Bytes kMacA = {0x02, 0, 0, 0, 0, 0x0a};
const Bytes kMacB = {0x02, 0, 0, 0, 0, 0x0b};

Bytes ethernet(uint16_t ether_type, const Bytes& l3, bool vlan = false) {
    Bytes b = kMacB;
    put(b, kMacA);
    if (vlan) {
        put16(b, 0x8100);
        put16(b, 100);
    }
    put16(b, ether_type);
    put(b, l3);
    return b;
}

Bytes l4_header(uint8_t proto, uint16_t sport, uint16_t dport, size_t payload) {
    Bytes b;
    if (proto == kIcmp) {
        b = {8, 0, 0, 0, 0, 1, 0, 1};
    } else {
        put16(b, sport);
        put16(b, dport);
        if (proto == kTcp) put(b, Bytes{0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0});
        else put(b, Bytes{uint8_t((8 + payload) >> 8), uint8_t(8 + payload), 0, 0});
    }
    for (size_t i = 0; i < payload; ++i) b.push_back(uint8_t(0x30 + i * 7));
    return b;
}

size_t l4_checksum_at(uint8_t proto) { return proto == kTcp ? 16 : proto == kUdp ? 6 : 2; }

struct V4 {
    const char* src = "192.0.2.1";
    const char* dst = "198.51.100.2";
    uint8_t proto = kTcp;
    uint16_t sport = 40000;
    uint16_t dport = 80;
    size_t payload = 11;
    uint16_t frag = 0;
    bool vlan = false;
};

// IPv4 with valid header and L4 checksums (computed by DPDK).
Bytes ipv4(const V4& v) {
    Bytes ip = {0x45, 0};
    const Bytes l4 = l4_header(v.proto, v.sport, v.dport, v.payload);
    put16(ip, uint16_t(20 + l4.size()));
    put16(ip, 0x0101);
    put16(ip, v.frag);
    ip.push_back(61);
    ip.push_back(v.proto);
    put16(ip, 0);
    put(ip, address_bytes(v.src));
    put(ip, address_bytes(v.dst));
    put(ip, l4);
    auto* h = reinterpret_cast<rte_ipv4_hdr*>(ip.data());
    if (v.proto != kIcmp && (v.frag & 0x1fff) == 0) {
        const uint16_t sum = rte_ipv4_udptcp_cksum(h, ip.data() + 20);
        std::memcpy(ip.data() + 20 + l4_checksum_at(v.proto), &sum, 2);
    }
    h->hdr_checksum = rte_ipv4_cksum(h);
    return ethernet(0x0800, ip, v.vlan);
}

// IPv6 from 2001:db8::1 to 2001:db8::2 carrying `l4` (next header `proto`), with the L4
// checksum at `sum_at` in it valid (computed by DPDK over the pseudo-header).
Bytes ipv6_with(uint8_t proto, const Bytes& l4, size_t sum_at) {
    Bytes ip = {0x60, 0, 0, 0};
    put16(ip, uint16_t(l4.size()));
    ip.push_back(proto);
    ip.push_back(64);
    put(ip, address_bytes("2001:db8::1"));
    put(ip, address_bytes("2001:db8::2"));
    put(ip, l4);
    auto* h = reinterpret_cast<rte_ipv6_hdr*>(ip.data());
    const uint16_t sum = rte_ipv6_udptcp_cksum(h, ip.data() + 40);
    std::memcpy(ip.data() + 40 + sum_at, &sum, 2);
    return ethernet(0x86dd, ip);
}

Bytes ipv6(uint8_t proto, uint16_t sport, uint16_t dport, size_t payload = 9) {
    return ipv6_with(proto, l4_header(proto, sport, dport, payload), l4_checksum_at(proto));
}

// ICMPv6 echo request; its checksum covers the addresses too.
Bytes icmpv6_echo() {
    Bytes l4 = {128, 0, 0, 0, 0, 1, 0, 1};
    for (int i = 0; i < 12; ++i) l4.push_back(uint8_t(0x40 + i));
    return ipv6_with(58, l4, 2);
}

bool ipv6_l4_valid(const Bytes& f) {
    return rte_ipv6_udptcp_cksum_verify(reinterpret_cast<const rte_ipv6_hdr*>(f.data() + kEth), f.data() + kEth + 40) == 0;
}

Bytes arp() { return ethernet(0x0806, Bytes(28, 0x01)); }
Bytes v4_probe();

uint16_t be16_at(const Bytes& b, size_t at) { return uint16_t(b[at] << 8 | b[at + 1]); }
Bytes slice(const Bytes& b, size_t at, size_t n) { return Bytes(b.begin() + at, b.begin() + at + n); }

bool ipv4_header_valid(const Bytes& f, size_t l2 = kEth) {
    return rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(f.data() + l2)) == 0;
}
bool ipv4_l4_valid(const Bytes& f, size_t l2 = kEth) {
    return rte_ipv4_udptcp_cksum_verify(reinterpret_cast<const rte_ipv4_hdr*>(f.data() + l2), f.data() + l2 + 20) == 0;
}

// ---- stages ----------------------------------------------------------------------------------

MbufPool& test_pool() {
    static MbufPool pool([] {
        MbufPoolSpec spec;
        spec.name = "rewrite_test";
        spec.mbufs = 4095;
        return spec;
    }());
    return pool;
}

ParamValues params_for(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

Bytes v4_probe() { return ipv4({.src = "10.1.2.3"}); }

class RewriteTest : public testing::Test {
protected:
    // Runs `frame` through parse and a rewrite with `given`; returns the frame afterwards.
    Bytes rewritten(const Given& given, const Bytes& frame) {
        rewrite_ = std::make_unique<Rewrite>(params_for("rewrite", given));
        return through(*rewrite_, frame);
    }
    Bytes through(Rewrite& r, const Bytes& frame, uint8_t port = 0) {
        rte_mbuf* m = rte_pktmbuf_alloc(test_pool().get());
        char* at = rte_pktmbuf_append(m, uint16_t(frame.size()));
        if (!frame.empty()) std::memcpy(at, frame.data(), frame.size());
        Burst b;
        b.d[b.n++] = PacketDesc{m, 0, saturate_length(uint32_t(frame.size())), port, 0};
        parse_.process(b);
        r.process(b);
        EXPECT_EQ(b.n, 1) << "rewrite never drops";
        const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
        Bytes out(p, p + rte_pktmbuf_data_len(m));
        rte_pktmbuf_free(m);
        return out;
    }
    uint64_t event(const std::string& name) const {
        for (size_t i = 0; i < rewrite_->events().size(); ++i)
            if (rewrite_->events()[i] == name) return rewrite_->stats().event[i].get();
        ADD_FAILURE() << "no event " << name;
        return 0;
    }

    Parse parse_{params_for("parse", {})};
    std::unique_ptr<Rewrite> rewrite_;
};

const Given kAll = {{"src_mac", "0a:0b:0c:0d:0e:0f"}, {"dst_mac", "1a:1b:1c:1d:1e:1f"},
                    {"src_ip", "203.0.113.7"},       {"dst_ip", "10.9.8.7"},
                    {"src_port", "1234"},            {"dst_port", "8080"}};

// ---- parameters ------------------------------------------------------------------------------

TEST(RewriteRegistration, IsAProcessorWithEveryFieldOptional) {
    const StageInfo* info = StageRegistry::instance().find("rewrite");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    for (const char* name : {"src_mac", "dst_mac", "src_ip", "dst_ip", "src_port", "dst_port"}) {
        const ParamSpec* p = info->find_param(name);
        ASSERT_NE(p, nullptr) << name;
        EXPECT_FALSE(p->required) << name;
        EXPECT_FALSE(p->help.empty()) << name;
    }
    EXPECT_EQ(info->find_param("src_port")->default_text, "-1");
    EXPECT_EQ(info->find_param("src_ip")->default_text, "");
}

TEST(RewriteParameters, BadValuesAreRefusedAtTheirParameter) {
    const std::vector<std::pair<Given, std::string>> cases = {
        {{{"src_mac", "02:00:00:00:00"}}, "'src_mac': '02:00:00:00:00' is not a MAC address (expected six hex bytes, aa:bb:cc:dd:ee:ff)"},
        {{{"dst_mac", "02:00:00:00:00:0g"}}, "'dst_mac': '02:00:00:00:00:0g' is not a MAC address (expected six hex bytes, aa:bb:cc:dd:ee:ff)"},
        {{{"dst_mac", "02:00-00:00:00:01"}}, "'dst_mac': '02:00-00:00:00:01' is not a MAC address (expected six hex bytes, aa:bb:cc:dd:ee:ff)"},
        {{{"src_ip", "10.0.0.256"}}, "'src_ip': '10.0.0.256' is not an IPv4 or IPv6 address"},
        {{{"dst_ip", "2001:db8::/32"}}, "'dst_ip': '2001:db8::/32' is not an IPv4 or IPv6 address"},
        {{{"src_port", "65536"}}, "'src_port' must be a port 0-65535, or -1 to leave it"},
        {{{"dst_port", "-2"}}, "'dst_port' must be a port 0-65535, or -1 to leave it"},
    };
    for (const auto& [given, message] : cases) {
        try {
            Rewrite r(params_for("rewrite", given));
            ADD_FAILURE() << given[0].second << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(std::string(e.what()), "app.yaml:2:5: " + message);
        }
    }
    try {
        Rewrite r(params_for("rewrite", {{"src_ip", "10.0.0.1"}, {"dst_ip", "2001:db8::1"}}));
        ADD_FAILURE() << "mixed families accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), "app.yaml:3:5: 'dst_ip': src_ip and dst_ip must be of one family (IPv4 or IPv6)");
    }
}

TEST_F(RewriteTest, MacsWrittenWithDashesOrCapitalsSetTheSameBytes) {
    const Bytes out = rewritten({{"dst_mac", "1a-2b-3c-4d-5e-6f"}, {"src_mac", "A0:B1:C2:D3:E4:F5"}}, ipv4({}));
    EXPECT_EQ(slice(out, 0, 6), (Bytes{0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f}));
    EXPECT_EQ(slice(out, 6, 6), (Bytes{0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5}));
}

// ---- fields and checksums --------------------------------------------------------------------

TEST_F(RewriteTest, EveryFieldIsSetAndBothChecksumsStayValidForTcpAndUdp) {
    for (const uint8_t proto : {kTcp, kUdp}) {
        SCOPED_TRACE(proto == kTcp ? "TCP" : "UDP");
        const Bytes out = rewritten(kAll, ipv4({.proto = proto}));
        EXPECT_EQ(slice(out, 0, 6), (Bytes{0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}));
        EXPECT_EQ(slice(out, 6, 6), (Bytes{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}));
        EXPECT_EQ(slice(out, kEth + 12, 4), address_bytes("203.0.113.7"));
        EXPECT_EQ(slice(out, kEth + 16, 4), address_bytes("10.9.8.7"));
        EXPECT_EQ(be16_at(out, kEth + 20), 1234);
        EXPECT_EQ(be16_at(out, kEth + 22), 8080);
        EXPECT_TRUE(ipv4_header_valid(out));
        EXPECT_TRUE(ipv4_l4_valid(out));
        EXPECT_EQ(event("not_ipv4") + event("no_ports"), 0u);
    }
}

TEST_F(RewriteTest, AnySubsetOfFieldsMayBeSetAndTheRestIsUntouched) {
    const Bytes in = ipv4({});
    const Bytes out = rewritten({{"dst_ip", "10.0.0.1"}}, in);
    Bytes expect = in;
    std::copy_n(address_bytes("10.0.0.1").begin(), 4, expect.begin() + kEth + 16);
    // Only the address and the two checksums differ.
    for (size_t i = 0; i < in.size(); ++i) {
        const bool checksum = i == kEth + 10 || i == kEth + 11 || i == kEth + 36 || i == kEth + 37;
        if (!checksum) {
            EXPECT_EQ(out[i], expect[i]) << "byte " << i;
        }
    }
    EXPECT_TRUE(ipv4_header_valid(out));
    EXPECT_TRUE(ipv4_l4_valid(out));

    const Bytes ports_only = rewritten({{"src_port", "0"}}, in);
    EXPECT_EQ(be16_at(ports_only, kEth + 20), 0);
    EXPECT_EQ(slice(ports_only, 0, kEth + 20), slice(in, 0, kEth + 20)) << "IP header untouched";
    EXPECT_TRUE(ipv4_l4_valid(ports_only));
}

TEST_F(RewriteTest, IncrementalChecksumsEqualFreshOnesOnRandomPackets) {
    std::mt19937 rng(11);
    auto address = [&](char* buf) {
        std::snprintf(buf, 16, "%u.%u.%u.%u", unsigned(rng() % 256), unsigned(rng() % 256),
                      unsigned(rng() % 256), unsigned(rng() % 256));
        return buf;
    };
    for (int n = 0; n < 1000; ++n) {
        char a[16], b[16], c[16], d[16];
        const uint8_t proto = n % 2 ? kTcp : kUdp;
        const Bytes in = ipv4({.src = address(a), .dst = address(b), .proto = proto,
                               .sport = uint16_t(rng()), .dport = uint16_t(rng()), .payload = rng() % 40});
        const Given given = {{"src_ip", address(c)}, {"dst_ip", address(d)},
                             {"src_port", std::to_string(rng() % 65536)}, {"dst_port", std::to_string(rng() % 65536)}};
        Bytes out = rewritten(given, in);
        // What DPDK computes from scratch over the rewritten packet.
        Bytes fresh = out;
        auto* h = reinterpret_cast<rte_ipv4_hdr*>(fresh.data() + kEth);
        h->hdr_checksum = 0;
        h->hdr_checksum = rte_ipv4_cksum(h);
        const size_t at = kEth + 20 + l4_checksum_at(proto);
        fresh[at] = fresh[at + 1] = 0;
        const uint16_t l4 = rte_ipv4_udptcp_cksum(h, fresh.data() + kEth + 20);
        std::memcpy(fresh.data() + at, &l4, 2);
        ASSERT_EQ(out, fresh) << "packet " << n;
    }
}

TEST_F(RewriteTest, AUdpChecksumOfZeroMeansNoneAndStaysZero) {
    Bytes in = ipv4({.proto = kUdp});
    in[kEth + 26] = in[kEth + 27] = 0;
    const Bytes out = rewritten({{"src_ip", "10.1.1.1"}, {"dst_port", "53"}}, in);
    EXPECT_EQ(be16_at(out, kEth + 26), 0);
    EXPECT_EQ(be16_at(out, kEth + 22), 53);
    EXPECT_TRUE(ipv4_header_valid(out));
}

TEST_F(RewriteTest, Ipv6PortsAreRewrittenWithAValidChecksumButIpv6AddressesAreNot) {
    for (const uint8_t proto : {kTcp, kUdp}) {
        const Bytes in = ipv6(proto, 5000, 6000);
        const Bytes out = rewritten({{"src_ip", "10.0.0.1"}, {"src_port", "7000"}, {"dst_port", "443"}}, in);
        EXPECT_EQ(be16_at(out, kEth + 40), 7000);
        EXPECT_EQ(be16_at(out, kEth + 42), 443);
        EXPECT_EQ(slice(out, kEth, 40), slice(in, kEth, 40)) << "the IPv6 header is untouched";
        EXPECT_EQ(rte_ipv6_udptcp_cksum_verify(reinterpret_cast<const rte_ipv6_hdr*>(out.data() + kEth),
                                               out.data() + kEth + 40),
                  0);
        EXPECT_EQ(event("not_ipv4"), 1u);
    }
}

TEST_F(RewriteTest, Ipv6AddressesAreSetWithAValidL4ChecksumAndLeaveIpv4Alone) {
    for (const uint8_t proto : {kTcp, kUdp}) {
        const Bytes in = ipv6(proto, 5000, 6000);
        const Bytes out = rewritten({{"src_ip", "2001:db8:ffff::7"}, {"dst_ip", "fd00::1"}, {"src_port", "7000"}}, in);
        EXPECT_EQ(slice(out, kEth + 8, 16), address_bytes("2001:db8:ffff::7"));
        EXPECT_EQ(slice(out, kEth + 24, 16), address_bytes("fd00::1"));
        EXPECT_EQ(slice(out, kEth, 8), slice(in, kEth, 8)) << "the rest of the IPv6 header is untouched";
        EXPECT_EQ(be16_at(out, kEth + 40), 7000);
        EXPECT_EQ(rte_ipv6_udptcp_cksum_verify(reinterpret_cast<const rte_ipv6_hdr*>(out.data() + kEth),
                                               out.data() + kEth + 40),
                  0);
        EXPECT_EQ(event("not_ipv6"), 0u);
    }
    const Bytes v4 = ipv4({});
    const Bytes out = rewritten({{"src_ip", "2001:db8:ffff::7"}}, v4);
    EXPECT_EQ(out, v4);
    EXPECT_EQ(event("not_ipv6"), 1u);
    // ICMPv6's checksum covers the addresses as well.
    const Bytes icmp = icmpv6_echo();
    ASSERT_TRUE(ipv6_l4_valid(icmp));
    const Bytes moved = rewritten({{"src_ip", "2001:db8:ffff::7"}, {"dst_ip", "fd00::1"}}, icmp);
    EXPECT_EQ(slice(moved, kEth + 8, 16), address_bytes("2001:db8:ffff::7"));
    EXPECT_TRUE(ipv6_l4_valid(moved));
}

// A rules file in the temporary directory.
std::string rules_file(const std::string& text) {
    static int serial = 0;
    const std::string path = (fs::temp_directory_path() / ("tp-rewrite-" + std::to_string(getpid()) + "-" +
                                                            std::to_string(serial++) + ".rules")).string();
    std::ofstream(path) << text;
    return path;
}

TEST_F(RewriteTest, TheFirstMatchingRuleRewritesAndUnmatchedPacketsPassUnchanged) {
    const std::string path = rules_file(
        "# SNAT the inside, DNAT a published port, then only the next hop's MAC for IPv4\n"
        "src 10.0.0.0/8 proto tcp             set src_ip 192.0.2.1 src_port 40000\n"
        "dst 192.0.2.1 dport 8080-8081        set dst_ip 10.0.0.5 dst_port 80\n"
        "src 2001:db8:1::/48                  set src_ip 2001:db8:ffff::1\n"
        "src 0.0.0.0/0                        set dst_mac 02:00:00:00:00:02\n");
    auto through_rules = [&](const Bytes& frame) { return rewritten({{"rules", path}}, frame); };

    Bytes out = through_rules(ipv4({.src = "10.1.2.3", .dst = "198.51.100.2", .proto = kTcp, .sport = 1111}));
    EXPECT_EQ(slice(out, kEth + 12, 4), address_bytes("192.0.2.1"));
    EXPECT_EQ(be16_at(out, kEth + 20), 40000);
    EXPECT_EQ(slice(out, 0, 6), kMacB) << "only the first matching rule applies";
    EXPECT_TRUE(ipv4_header_valid(out));
    EXPECT_TRUE(ipv4_l4_valid(out));

    // UDP from the inside: not rule 1 (tcp), not rule 2 (dst), so rule 4.
    out = through_rules(ipv4({.src = "10.1.2.3", .proto = kUdp}));
    EXPECT_EQ(slice(out, kEth + 12, 4), address_bytes("10.1.2.3"));
    EXPECT_EQ(slice(out, 0, 6), (Bytes{2, 0, 0, 0, 0, 2}));

    out = through_rules(ipv4({.src = "203.0.113.9", .dst = "192.0.2.1", .proto = kUdp, .dport = 8081}));
    EXPECT_EQ(slice(out, kEth + 16, 4), address_bytes("10.0.0.5"));
    EXPECT_EQ(be16_at(out, kEth + 22), 80);
    EXPECT_TRUE(ipv4_header_valid(out));
    EXPECT_TRUE(ipv4_l4_valid(out));
    out = through_rules(ipv4({.src = "203.0.113.9", .dst = "192.0.2.1", .proto = kUdp, .dport = 8082}));
    EXPECT_EQ(slice(out, kEth + 16, 4), address_bytes("192.0.2.1")) << "8082 is outside the range";

    // IPv6 matches only the IPv6 rule; an IPv6 source outside it matches nothing.
    const Bytes v6 = ipv6(kTcp, 5000, 6000);  // from 2001:db8::1
    out = through_rules(v6);
    EXPECT_EQ(out, v6);
    EXPECT_EQ(event("unmatched"), 1u);
    const std::string six = rules_file("src 2001:db8::/64 proto udp sport 5000 set src_ip 2001:db8:ffff::1 src_port 9\n"
                                       "src 2001:db8::/64 set dst_ip fd00::9\n");
    out = rewritten({{"rules", six}}, ipv6(kUdp, 5000, 6000));
    EXPECT_EQ(slice(out, kEth + 8, 16), address_bytes("2001:db8:ffff::1"));
    EXPECT_EQ(be16_at(out, kEth + 40), 9);
    EXPECT_TRUE(ipv6_l4_valid(out));
    out = rewritten({{"rules", six}}, icmpv6_echo());  // not UDP: the second rule
    EXPECT_EQ(slice(out, kEth + 24, 16), address_bytes("fd00::9"));
    EXPECT_TRUE(ipv6_l4_valid(out));
    EXPECT_EQ(through(*rewrite_, v4_probe()), v4_probe()) << "an IPv4 packet matches no IPv6 rule";
    EXPECT_EQ(event("unmatched"), 1u);
    fs::remove(six);
    EXPECT_EQ(through_rules(arp()), arp());
    EXPECT_EQ(event("unmatched"), 1u);
    fs::remove(path);
}

TEST(RewriteParameters, RuleFileMistakesAreLocatedAtTheirLine) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"src 10.0.0.0/8\n", "no 'set': a rule is [match ...] set FIELD VALUE [FIELD VALUE ...]"},
        {"set\n", "'set' names no field"},
        {"src 10.0.0.1/8 set src_ip 1.2.3.4\n", "src: "},
        {"src 10.0.0.0/8 set src_ip 2001:db8::1\n", "is IPv6 but the rule is IPv4 already: a rule is of one family"},
        {"proto gre set src_port 1\n", "proto 'gre': known are tcp, udp, icmp"},
        {"dport 9-8 set src_port 1\n", "dport: "},
        {"port 80 set src_port 1\n", "unknown match 'port'"},
        {"set ttl 3\n", "unknown field 'ttl'"},
        {"set src_port 70000\n", "'src_port' must be a port 0-65535"},
        {"set src_mac\n", "field 'src_mac' needs a value"},
        {"set src_ip 1.2.3.4 src_ip 5.6.7.8\n", "field 'src_ip' given twice"},
        {"dport 80 dport 81 set src_port 1\n", "match 'dport' given twice"},
    };
    for (const auto& [text, message] : cases) {
        const std::string path = rules_file("# a comment line first\n" + text);
        try {
            Rewrite r(params_for("rewrite", {{"rules", path}}));
            ADD_FAILURE() << text << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(std::string(e.what()).rfind(path + ":2: ", 0), 0u) << e.what();
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
        fs::remove(path);
    }
    const std::string path = rules_file("set src_port 1\n");
    try {
        Rewrite r(params_for("rewrite", {{"rules", path}, {"dst_port", "2"}}));
        ADD_FAILURE() << "rules and fields accepted together";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), "app.yaml:3:5: 'dst_port' and 'rules' both say what to write: put it in a rule");
    }
    fs::remove(path);
}

TEST_F(RewriteTest, NonIpPacketsKeepEverythingButTheirMacs) {
    const Bytes in = arp();
    const Bytes out = rewritten(kAll, in);
    EXPECT_EQ(slice(out, 0, 6), (Bytes{0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}));
    EXPECT_EQ(slice(out, 6, 6), (Bytes{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}));
    EXPECT_EQ(slice(out, 12, in.size() - 12), slice(in, 12, in.size() - 12));
    EXPECT_EQ(event("not_ipv4"), 1u);
    EXPECT_EQ(event("no_ports"), 1u);
}

TEST_F(RewriteTest, IcmpGetsItsAddressesButHasNoPortsToSet) {
    const Bytes in = ipv4({.proto = kIcmp});
    const Bytes out = rewritten(kAll, in);
    EXPECT_EQ(slice(out, kEth + 12, 4), address_bytes("203.0.113.7"));
    EXPECT_TRUE(ipv4_header_valid(out));
    EXPECT_EQ(slice(out, kEth + 20, in.size() - kEth - 20), slice(in, kEth + 20, in.size() - kEth - 20));
    EXPECT_EQ(event("no_ports"), 1u);
}

TEST_F(RewriteTest, ANonFirstFragmentGetsItsAddressesAndKeepsItsPayload) {
    const Bytes in = ipv4({.proto = kUdp, .frag = 50});
    const Bytes out = rewritten(kAll, in);
    EXPECT_EQ(slice(out, kEth + 16, 4), address_bytes("10.9.8.7"));
    EXPECT_TRUE(ipv4_header_valid(out));
    EXPECT_EQ(slice(out, kEth + 20, in.size() - kEth - 20), slice(in, kEth + 20, in.size() - kEth - 20));
    EXPECT_EQ(event("no_ports"), 1u);
}

TEST_F(RewriteTest, VlanTaggedPacketsAreRewrittenBehindTheirTag) {
    const Bytes out = rewritten(kAll, ipv4({.vlan = true}));
    EXPECT_EQ(slice(out, 18 + 12, 4), address_bytes("203.0.113.7"));
    EXPECT_EQ(be16_at(out, 18 + 22), 8080);
    EXPECT_TRUE(ipv4_header_valid(out, 18));
    EXPECT_TRUE(ipv4_l4_valid(out, 18));
}

TEST_F(RewriteTest, TruncatedPacketsAreEditedOnlyWhereTheirHeadersAreWhole) {
    const Bytes whole = ipv4({.payload = 40});
    // Payload cut (a short snapshot): every header whole, so all fields change, safely.
    Bytes cut = whole;
    cut.resize(kEth + 20 + 20 + 5);
    Bytes out = rewritten(kAll, cut);
    EXPECT_EQ(be16_at(out, kEth + 22), 8080);
    EXPECT_TRUE(ipv4_header_valid(out));
    // TCP header cut: addresses change, ports cannot.
    cut.resize(kEth + 20 + 10);
    out = rewritten(kAll, cut);
    EXPECT_EQ(slice(out, kEth + 12, 4), address_bytes("203.0.113.7"));
    EXPECT_EQ(slice(out, kEth + 20, 10), slice(whole, kEth + 20, 10));
    EXPECT_EQ(event("no_ports"), 1u);
    // IPv4 header cut: only the MACs.
    cut.resize(kEth + 12);
    out = rewritten(kAll, cut);
    EXPECT_EQ(slice(out, kEth, 12), slice(whole, kEth, 12));
    // Shorter than an Ethernet header: nothing.
    for (size_t len : {0u, 5u, 13u}) {
        cut.resize(len);
        EXPECT_EQ(rewritten(kAll, cut), cut);
    }
}

TEST_F(RewriteTest, OnASharedCaptureValidChecksumsStayValid) {
    Rewrite r(params_for("rewrite", kAll));
    uint64_t checked = 0;
    for (const char* name : {"pcpp__example.pcap", "suricata__tls-subjectaltname__input.pcap", "zeek__irc-dcc-send.pcapng"}) {
    const std::string path = test::pcaps_dir() + "/" + name;
    const CaptureFile capture(path, Location{path});
    for (const CaptureRecord& rec : capture.records()) {
        if (rec.frame->nb_segs != 1) continue;
        const uint8_t* p = rte_pktmbuf_mtod(rec.frame, const uint8_t*);
        const Bytes in(p, p + rec.length);
        // Whole IPv4 TCP/UDP packets without options whose checksums are right to begin with.
        if (in.size() < kEth + 28 || be16_at(in, 12) != 0x0800 || in[kEth] != 0x45) continue;
        const uint16_t total = be16_at(in, kEth + 2);
        const uint8_t proto = in[kEth + 9];
        if ((proto != kTcp && proto != kUdp) || kEth + total > in.size() || (be16_at(in, kEth + 6) & 0x3fff)) continue;
        if (!ipv4_header_valid(in) || !ipv4_l4_valid(in)) continue;
        if (proto == kUdp && be16_at(in, kEth + 26) == 0) continue;
        const Bytes out = through(r, in);
        ASSERT_TRUE(ipv4_header_valid(out));
        ASSERT_TRUE(ipv4_l4_valid(out));
        ASSERT_EQ(be16_at(out, kEth + 22), 8080);
        ++checked;
    }
    }
    EXPECT_GT(checked, 1000u);
}

// ---- every shared capture, read where AddressSanitizer can see ---------------------------------

// A frame in a heap buffer of exactly its size, attached to an mbuf as an external buffer: a
// read past the frame is a heap overflow AddressSanitizer reports (mbuf data rooms are not
// instrumented). Frames of 64 KiB and more (an mbuf buffer length is 16 bits) are copied as
// ordinary chains.
void free_exact(void* addr, void* opaque) {
    delete[] static_cast<uint8_t*>(addr);
    delete static_cast<rte_mbuf_ext_shared_info*>(opaque);
}

rte_mbuf* exact_copy(const rte_mbuf* frame, rte_mempool* pool) {
    const uint32_t len = rte_pktmbuf_pkt_len(frame);
    if (len > UINT16_MAX) return rte_pktmbuf_copy(frame, pool, 0, UINT32_MAX);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    auto* buf = new uint8_t[len];
    const void* bytes = rte_pktmbuf_read(frame, 0, len, buf);
    if (bytes != buf) std::memcpy(buf, bytes, len);
    auto* shinfo = new rte_mbuf_ext_shared_info{};
    shinfo->free_cb = free_exact;
    shinfo->fcb_opaque = shinfo;
    rte_mbuf_ext_refcnt_set(shinfo, 1);
    rte_pktmbuf_attach_extbuf(m, buf, 0, uint16_t(len), shinfo);
    m->data_len = uint16_t(len);
    m->pkt_len = len;
    return m;
}


// Runs every record of every shared capture the pcap source reads through `parse` and
// `stage`, in bursts; returns the packets handed to the stage. Every packet must leave through
// the burst or a counted drop.
uint64_t run_every_shared_capture(Parse& parse, Stage& stage, rte_mempool* pool) {
    uint64_t packets = 0;
    size_t captures = 0;
    for (const std::string& path : test::shared_capture_paths()) {
        std::unique_ptr<CaptureFile> capture;
        try {
            capture = std::make_unique<CaptureFile>(path, Location{path});
        } catch (const LocatedError&) {
            continue;  // refused by the pcap source: never reaches a stage
        }
        ++captures;
        const auto& records = capture->records();
        for (size_t at = 0; at < records.size();) {
            Burst b;
            while (b.n < kBurstMax && at < records.size()) {
                const CaptureRecord& r = records[at++];
                b.d[b.n++] = PacketDesc{exact_copy(r.frame, pool), 0, saturate_length(r.length), 0, 0};
            }
            packets += b.n;
            const uint64_t drops_before = stage.stats().drops.get();
            const uint16_t n = b.n;
            parse.process(b);
            stage.process(b);
            EXPECT_EQ(uint64_t(b.n) + stage.stats().drops.get() - drops_before, n) << path;
            for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
        }
    }
    EXPECT_GE(captures, 20u);
    return packets;
}

TEST_F(RewriteTest, EveryReadableSharedCaptureRunsThroughWithoutReadingPastAFrame) {
    rewrite_ = std::make_unique<Rewrite>(params_for("rewrite", kAll));
    const uint64_t packets = run_every_shared_capture(parse_, *rewrite_, test_pool().get());
    EXPECT_GT(packets, 90000u);
    EXPECT_EQ(rewrite_->stats().drops.get(), 0u);
    EXPECT_GT(event("not_ipv4"), 0u);
    EXPECT_GT(event("no_ports"), 0u);

    // Rules read addresses and ports to match them: only where parse found them whole.
    const std::string path = rules_file(
        "src 10.0.0.0/8 proto tcp dport 1-1023   set src_ip 192.0.2.1 src_port 40000\n"
        "dst 2001:db8::/32 sport 53              set dst_ip 2001:db8::53 dst_port 5353\n"
        "proto icmp                              set dst_mac 02:00:00:00:00:02\n");
    rewrite_ = std::make_unique<Rewrite>(params_for("rewrite", {{"rules", path}}));
    EXPECT_EQ(run_every_shared_capture(parse_, *rewrite_, test_pool().get()), packets);
    EXPECT_GT(event("unmatched"), 0u);
    fs::remove(path);
}

// ---- per-port MACs (l3fwd) -------------------------------------------------------------------

const Given kPortMacs = {{"port_macs", "02:00:00:00:00:10, 02:00:00:00:00:11,02:00:00:00:00:12"},
                         {"next_hop_macs", "02:00:00:00:00:20,02:00:00:00:00:21, 02:00:00:00:00:22"}};

TEST_F(RewriteTest, EachOutputPortGivesItsOwnSourceMacAndItsNextHopsDestinationMac) {
    rewrite_ = std::make_unique<Rewrite>(params_for("rewrite", kPortMacs));
    const Bytes in = ipv4({});
    for (uint8_t port = 0; port < 3; ++port) {
        SCOPED_TRACE("port " + std::to_string(port));
        const Bytes out = through(*rewrite_, in, port);
        EXPECT_EQ(slice(out, 0, 6), (Bytes{0x02, 0, 0, 0, 0, uint8_t(0x20 + port)})) << "destination: the next hop";
        EXPECT_EQ(slice(out, 6, 6), (Bytes{0x02, 0, 0, 0, 0, uint8_t(0x10 + port)})) << "source: the port's own";
        EXPECT_EQ(slice(out, 12, out.size() - 12), slice(in, 12, in.size() - 12)) << "nothing past the MACs changes";
    }
    const Bytes not_ip = through(*rewrite_, arp(), 2);
    EXPECT_EQ(slice(not_ip, 0, 12), (Bytes{0x02, 0, 0, 0, 0, 0x22, 0x02, 0, 0, 0, 0, 0x12})) << "MACs are set on any frame";
    EXPECT_EQ(event("no_port_mac"), 0u);
}

TEST_F(RewriteTest, APortBeyondTheMacListsKeepsItsMacsAndIsCounted) {
    rewrite_ = std::make_unique<Rewrite>(params_for("rewrite", kPortMacs));
    const Bytes in = ipv4({});
    EXPECT_EQ(through(*rewrite_, in, 3), in);
    EXPECT_EQ(through(*rewrite_, in, 255), in);
    EXPECT_EQ(event("no_port_mac"), 2u);
}

TEST_F(RewriteTest, PerPortDestinationsCombineWithOneFixedSourceAndARulesMacWins) {
    const Bytes out = rewritten({{"src_mac", "0a:0b:0c:0d:0e:0f"}, {"next_hop_macs", "02:00:00:00:00:20, 02:00:00:00:00:21"}},
                                ipv4({}));
    EXPECT_EQ(slice(out, 0, 12), (Bytes{0x02, 0, 0, 0, 0, 0x20, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}));

    const fs::path rules = fs::temp_directory_path() / ("rewrite_port_macs_" + std::to_string(::getpid()) + ".rules");
    std::ofstream(rules) << "dst 198.51.100.0/24 set dst_mac 0e:0e:0e:0e:0e:0e\n";
    rewrite_ = std::make_unique<Rewrite>(params_for("rewrite", {{"rules", rules.string()},
                                                                {"port_macs", "02:00:00:00:00:10, 02:00:00:00:00:11"}}));
    const Bytes ruled = through(*rewrite_, ipv4({}), 1);
    EXPECT_EQ(slice(ruled, 0, 12), (Bytes{0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x02, 0, 0, 0, 0, 0x11}));
    const Bytes unmatched = through(*rewrite_, ipv4({.dst = "203.0.113.9"}), 0);
    EXPECT_EQ(slice(unmatched, 6, 6), (Bytes{0x02, 0, 0, 0, 0, 0x10})) << "port MACs apply whether a rule matches or not";
    EXPECT_EQ(event("unmatched"), 1u);
    fs::remove(rules);
}

TEST(RewriteParameters, BadPerPortMacsAreRefusedAtTheirParameterWithoutEal) {
    const std::string not_mac = "is not a MAC address (expected six hex bytes, aa:bb:cc:dd:ee:ff)";
    std::string many;
    for (int i = 0; i < 129; ++i) many += (i != 0 ? "," : "") + std::string("02:00:00:00:00:01");
    const std::vector<std::pair<Given, std::string>> cases = {
        {{{"port_macs", "02:00:00:00:00:10, 02:00:00:00:00:1g"}}, "app.yaml:2:5: 'port_macs' port 1: '02:00:00:00:00:1g' " + not_mac},
        {{{"next_hop_macs", "02:00:00:00:00"}}, "app.yaml:2:5: 'next_hop_macs' port 0: '02:00:00:00:00' " + not_mac},
        {{{"port_macs", "02:00:00:00:00:10,,02:00:00:00:00:12"}}, "app.yaml:2:5: 'port_macs' gives port 1 no MAC (an empty entry)"},
        {{{"port_macs", "02:00:00:00:00:10, 02:00:00:00:00:11"}, {"next_hop_macs", "02:00:00:00:00:20"}},
         "app.yaml:3:5: 'next_hop_macs' lists 1 ports but 'port_macs' 2: one of each per port"},
        {{{"src_mac", "02:00:00:00:00:01"}, {"port_macs", "02:00:00:00:00:10"}},
         "app.yaml:3:5: 'src_mac' and 'port_macs' both set the source MAC: give one"},
        {{{"dst_mac", "02:00:00:00:00:01"}, {"next_hop_macs", "02:00:00:00:00:20"}},
         "app.yaml:3:5: 'dst_mac' and 'next_hop_macs' both set the destination MAC: give one"},
        {{{"port_macs", many}}, "app.yaml:2:5: 'port_macs' lists 129 ports; a port is 0-127"},
    };
    for (const auto& [given, message] : cases) {
        try {
            Rewrite::check_params(params_for("rewrite", given));
            ADD_FAILURE() << given[0].second << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(std::string(e.what()), message);
        }
    }
    EXPECT_NO_THROW(Rewrite::check_params(params_for("rewrite", kPortMacs)));
}

}  // namespace
}  // namespace tp
