// acl: what a user relies on — every mistake in a rules file is reported as `file:line:` before
// traffic; IPv4 and IPv6 packets get the verdict, mark and count of the rules that match them,
// by priority; packets no rule can see (non-IP) get the default. Checked on crafted packets and,
// against tcpdump's counts for equivalent filters, on shared captures.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/acl.hpp"
#include "framework/capture/capture_file.hpp"
#include "stages/parse.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;
using Bytes = std::vector<uint8_t>;

// ---- packets ---------------------------------------------------------------------------------

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmpv6 = 58;

void put16(Bytes& b, uint16_t v) {
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}
void put(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

Bytes ipv4_address(const char* text) {
    uint32_t a = 0;
    std::string why;
    EXPECT_TRUE(parse_ipv4_address(text, a, why)) << why;
    return {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
}
Bytes ipv6_address(const char* text) {
    IpPrefix p;
    std::string why;
    EXPECT_TRUE(parse_ip_prefix(text, p, why) && p.ipv6) << why;
    return Bytes(p.v6.begin(), p.v6.end());
}

Bytes ethernet(uint16_t ether_type, const Bytes& l3) {
    Bytes b = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a};
    put16(b, ether_type);
    put(b, l3);
    return b;
}

Bytes ports_header(uint8_t proto, uint16_t sport, uint16_t dport) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    if (proto == kTcp) {
        const Bytes rest = {0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0};
        put(b, rest);
    } else {
        put16(b, 8);
        put16(b, 0);
    }
    return b;
}

Bytes l4_of(uint8_t proto, uint16_t sport, uint16_t dport) {
    if (proto == kTcp || proto == kUdp) return ports_header(proto, sport, dport);
    return {8, 0, 0, 0, 0, 1, 0, 1};  // an ICMP echo, or 8 bytes of anything else
}

struct V4 {
    const char* src = "192.0.2.1";
    const char* dst = "198.51.100.1";
    uint8_t proto = kTcp;
    uint16_t sport = 40000;
    uint16_t dport = 80;
    uint16_t frag = 0;        // flags and offset field
    size_t options = 0;       // bytes of IPv4 options (multiple of 4)
};

Bytes ipv4(const V4& v) {
    const Bytes l4 = (v.frag & 0x1fff) != 0 ? Bytes(16, 0xee) : l4_of(v.proto, v.sport, v.dport);
    const size_t header = 20 + v.options;
    Bytes b = {uint8_t(0x40 | header / 4), 0};
    put16(b, uint16_t(header + l4.size()));
    put16(b, 1);
    put16(b, v.frag);
    b.push_back(64);
    b.push_back(v.proto);
    put16(b, 0);
    put(b, ipv4_address(v.src));
    put(b, ipv4_address(v.dst));
    b.resize(header, 1);  // NOP options
    put(b, l4);
    return ethernet(0x0800, b);
}

struct V6 {
    const char* src = "2001:db8::1";
    const char* dst = "2001:db8:1::2";
    uint8_t proto = kTcp;
    uint16_t sport = 40000;
    uint16_t dport = 80;
    bool hop_by_hop = false;  // an 8-byte hop-by-hop options header first
};

Bytes ipv6(const V6& v) {
    Bytes rest;
    if (v.hop_by_hop) put(rest, Bytes{v.proto, 0, 1, 4, 0, 0, 0, 0});
    put(rest, l4_of(v.proto, v.sport, v.dport));
    Bytes b = {0x60, 0, 0, 0};
    put16(b, uint16_t(rest.size()));
    b.push_back(v.hop_by_hop ? 0 : v.proto);
    b.push_back(64);
    put(b, ipv6_address(v.src));
    put(b, ipv6_address(v.dst));
    put(b, rest);
    return ethernet(0x86dd, b);
}

Bytes arp() { return ethernet(0x0806, Bytes(28, 0x01)); }

// ---- stages ----------------------------------------------------------------------------------

MbufPool& test_pool() {
    static MbufPool pool([] {
        MbufPoolSpec spec;
        spec.name = "acl_test";
        spec.mbufs = 4095;
        return spec;
    }());
    return pool;
}

rte_mbuf* mbuf_of(const Bytes& frame) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_pool().get());
    std::memcpy(rte_pktmbuf_append(m, uint16_t(frame.size())), frame.data(), frame.size());
    return m;
}

ParamValues params_for(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

class AclTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_acl"};
    const std::string dir_ = scratch_.path();

    std::string write(const std::string& text) {
        const std::string path = dir_ + "/rules" + std::to_string(files_++) + ".txt";
        std::ofstream(path) << text;
        return path;
    }

    // An opened acl on `rules` (the file's text).
    std::unique_ptr<Acl> acl(const std::string& rules, const std::string& default_action = "permit") {
        auto a = std::make_unique<Acl>(params_for("acl", {{"rules", write(rules)}, {"default", default_action}}));
        StageEnv env;
        env.node_name = "acl";
        a->open(env);
        return a;
    }

    // The error opening an acl on `rules` gives; "" if it opened.
    std::string refusal(const std::string& rules, std::string* path = nullptr) {
        const std::string p = write(rules);
        if (path != nullptr) *path = p;
        Acl a(params_for("acl", {{"rules", p}}));
        StageEnv env;
        try {
            a.open(env);
        } catch (const LocatedError& e) {
            return e.what();
        }
        return "";
    }

    // Parses and classifies one burst of `frames`; returns the frames kept, freed.
    std::vector<rte_mbuf*> run(Acl& a, const std::vector<Bytes>& frames, bool parsed = true) {
        Burst b;
        for (const Bytes& f : frames) b.d[b.n++] = PacketDesc{mbuf_of(f), 0, saturate_length(uint32_t(f.size())), 0, 0};
        if (parsed) parse_.process(b);
        a.process(b);
        return kept(b);
    }
    static std::vector<rte_mbuf*> kept(const Burst& b) {
        std::vector<rte_mbuf*> out;
        for (const PacketDesc& d : b) out.push_back(d.mbuf);
        return out;
    }
    // Whether `a` lets `frame` through.
    bool passes(Acl& a, const Bytes& frame, uint32_t* mark = nullptr, bool parsed = true) {
        const std::vector<rte_mbuf*> out = run(a, {frame}, parsed);
        if (out.empty()) return false;
        if (mark != nullptr && !packet_mark(out[0], *mark)) *mark = UINT32_MAX;
        rte_pktmbuf_free(out[0]);
        return true;
    }

    Parse parse_{params_for("parse", {})};
    int files_ = 0;
};

uint64_t event(const Stage& s, const std::string& name) {
    for (size_t i = 0; i < s.events().size(); ++i)
        if (s.events()[i] == name) return s.stats().event[i].get();
    ADD_FAILURE() << "no event " << name;
    return 0;
}
uint64_t dropped(const Stage& s, const std::string& reason) {
    for (size_t i = 0; i < s.drop_reasons().size(); ++i)
        if (s.drop_reasons()[i] == reason) return s.stats().reason[i].get();
    ADD_FAILURE() << "no drop reason " << reason;
    return 0;
}

// ---- registration and rules file -------------------------------------------------------------

TEST(AclRegistration, IsAProcessorWithItsParametersDocumented) {
    const StageInfo* info = StageRegistry::instance().find("acl");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    ASSERT_NE(info->find_param("rules"), nullptr);
    EXPECT_TRUE(info->find_param("rules")->required);
    ASSERT_NE(info->find_param("default"), nullptr);
    EXPECT_EQ(info->find_param("default")->default_text, "permit");
    EXPECT_EQ(info->find_param("default")->choices, (std::vector<std::string>{"permit", "deny"}));
    for (const ParamSpec& p : info->params) EXPECT_FALSE(p.help.empty()) << p.name;
}

TEST_F(AclTest, EveryMistakeInTheRulesFileIsReportedAtItsFileAndLine) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"alow proto tcp", "1: unknown action 'alow' (expected permit, deny, count or mark N)"},
        {"# header\n\npermit proto tcp\ndeny proto tpc  # typo",
         "4: unknown protocol 'tpc' (expected any, tcp, udp, sctp, icmp, icmp6, gre, esp, ah or 0-255)"},
        {"permit proto 256", "1: unknown protocol '256' (expected any, tcp, udp, sctp, icmp, icmp6, gre, esp, ah or 0-255)"},
        {"proto tcp dport 22", "1: missing action: a rule starts with permit, deny, count or mark N, not 'proto'"},
        {"permit xport 22", "1: unknown field 'xport' (expected proto, src, dst, sport, dport, family or prio)"},
        {"permit deny", "1: a rule has one action; 'deny' comes after 'permit'"},
        {"permit proto tcp proto udp", "1: 'proto' given twice"},
        {"permit proto tcp dport", "1: 'dport' needs a value"},
        {"mark", "1: 'mark' needs a value 0-4294967295"},
        {"mark 4294967296 proto tcp", "1: 'mark' needs a value 0-4294967295, got '4294967296'"},
        {"permit src 10.0.0.0/33", "1: bad src prefix: bad prefix length in '10.0.0.0/33': expected 0-32"},
        {"permit src 2001:db8::/129", "1: bad src prefix: bad prefix length in '2001:db8::/129': expected 0-128"},
        {"permit dst 10.0.0.1/8", "1: bad dst prefix: '10.0.0.1/8' has bits set beyond its prefix length (meant 10.0.0.0/8?)"},
        {"permit dst 300.1.2.3", "1: bad dst prefix: '300.1.2.3' is not an IPv4 or IPv6 address"},
        {"permit src 10.0.0.0/", "1: bad src prefix: bad prefix length in '10.0.0.0/': expected 0-32"},
        {"deny proto tcp dport 23-22", "1: dport: bad port range '23-22': 23 is above 22"},
        {"deny proto tcp sport 70000", "1: sport: bad port '70000': expected a port 0-65535 or a range LOW-HIGH"},
        {"deny proto tcp dport 1-2-3", "1: dport: bad port '1-2-3': expected a port 0-65535 or a range LOW-HIGH"},
        {"permit src 10.0.0.0/8 dst 2001:db8::/32", "1: src is IPv4 but dst is IPv6"},
        {"permit family ipv6 src 10.0.0.0/8", "1: family ipv6 but src 10.0.0.0/8 is IPv4"},
        {"permit family ip4", "1: unknown family 'ip4' (expected any, ipv4 or ipv6)"},
        {"permit proto icmp dport 22", "1: sport/dport need proto tcp, udp, sctp or any (protocol 1 has no ports)"},
        {"permit prio 4096", "1: bad prio '4096': expected 0-4095"},
        {"permit proto tcp\npermit proto udp\n\n# fine so far\ncount src 10.0.0.0/8 sport", "5: 'sport' needs a value"},
    };
    for (const auto& [rules, message] : cases) {
        std::string path;
        const std::string error = refusal(rules, &path);
        EXPECT_EQ(error, path + ":" + message) << "rules:\n" << rules;
    }
}

TEST_F(AclTest, AMissingRulesFileIsReportedWhereTheUserNamedIt) {
    Acl a(params_for("acl", {{"rules", dir_ + "/nowhere.rules"}}));
    StageEnv env;
    try {
        a.open(env);
        FAIL() << "opened";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "app.yaml:2:5: cannot read '" + dir_ + "/nowhere.rules': No such file or directory");
    }
}

// A device or a binary file named as the rules by mistake is refused at its first line, not
// read into memory without end (/dev/zero has no newline to stop a line at).
TEST_F(AclTest, ADeviceOrBinaryFileNamedAsTheRulesIsRefusedAtOnce) {
    const std::string long_line = write(std::string((size_t{1} << 20) + 1, 'x'));
    const std::pair<std::string, std::string> cases[] = {
        {"/dev/zero", "/dev/zero:1: holds binary data (a NUL byte): a rules file is text"},
        {long_line, long_line + ":1: a line longer than 1 MiB: a rules file holds one entry a line"},
    };
    for (const auto& [path, says] : cases) {
        Acl a(params_for("acl", {{"rules", path}}));
        StageEnv env;
        try {
            a.open(env);
            FAIL() << path << " opened";
        } catch (const LocatedError& e) {
            EXPECT_EQ(std::string(e.what()), says);
        }
    }
}

TEST_F(AclTest, ABadRulesFileIsRefusedAtOpenNotAtConstruction) {
    // Construction takes parameters only; the file is read by open(), before any traffic.
    const std::string path = write("nonsense");
    const ParamValues p = params_for("acl", {{"rules", path}});
    std::unique_ptr<Acl> a;
    ASSERT_NO_THROW(a = std::make_unique<Acl>(p));
    StageEnv env;
    try {
        a->open(env);
        FAIL() << "a rules file of nonsense opened";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), path + ":1: unknown action 'nonsense' (expected permit, deny, count or mark N)");
    }
}

TEST_F(AclTest, TheMemoryTheClassifiersNeedIsEstimatedFromTheRuleCount) {
    const uint64_t few = Acl::memory_hint(params_for("acl", {{"rules", write("permit\n")}}));
    std::string many;
    for (int i = 0; i < 1000; ++i) many += "deny proto tcp dport " + std::to_string(i) + "\n";
    const uint64_t more = Acl::memory_hint(params_for("acl", {{"rules", write(many)}}));
    EXPECT_GT(few, 0u);
    EXPECT_GT(more, few + 1000 * 1024);
    EXPECT_EQ(Acl::memory_hint(params_for("acl", {{"rules", dir_ + "/none"}})), 0u);
}

TEST_F(AclTest, TheShippedExampleRulesParse) {
    const auto a = acl(test::read_file(test::source_root() + "/conf/data/firewall.rules"));
    EXPECT_GE(a->rules().size(), 10u);
}

TEST_F(AclTest, RulesRememberTheirLinesAndFields) {
    const auto a = acl("# comment\ndeny  proto tcp  src 10.0.0.0/8  dst any  sport any  dport 22-23  prio 10\n"
                       "mark 7 dst 2001:db8::/32\n");
    ASSERT_EQ(a->rules().size(), 2u);
    const AclRule& deny = a->rules()[0];
    EXPECT_EQ(deny.line, 2);
    EXPECT_EQ(deny.action, AclAction::Deny);
    EXPECT_TRUE(deny.ipv4);
    EXPECT_FALSE(deny.ipv6);
    EXPECT_EQ(deny.proto, kTcp);
    EXPECT_EQ(deny.src.str(), "10.0.0.0/8");
    EXPECT_EQ(deny.dport_low, 22);
    EXPECT_EQ(deny.dport_high, 23);
    EXPECT_EQ(deny.sport_low, 0);
    EXPECT_EQ(deny.sport_high, 65535);
    EXPECT_EQ(deny.prio, 10u);
    const AclRule& mark = a->rules()[1];
    EXPECT_EQ(mark.line, 3);
    EXPECT_EQ(mark.action, AclAction::Mark);
    EXPECT_EQ(mark.mark, 7u);
    EXPECT_FALSE(mark.ipv4);
    EXPECT_TRUE(mark.ipv6);
}

// ---- classification --------------------------------------------------------------------------

TEST_F(AclTest, Ipv4FiveTupleRulesDecideByPrefixProtocolAndPortRange) {
    const auto a = acl("deny proto tcp src 10.0.0.0/8 dport 22-23\n");
    EXPECT_FALSE(passes(*a, ipv4({.src = "10.1.2.3", .dport = 22})));
    EXPECT_FALSE(passes(*a, ipv4({.src = "10.255.0.1", .dport = 23})));
    EXPECT_TRUE(passes(*a, ipv4({.src = "10.1.2.3", .dport = 24})));
    EXPECT_TRUE(passes(*a, ipv4({.src = "11.0.0.1", .dport = 22})));
    EXPECT_TRUE(passes(*a, ipv4({.src = "10.1.2.3", .proto = kUdp, .dport = 22})));
    EXPECT_EQ(dropped(*a, "denied"), 2u);
    EXPECT_EQ(a->rule_hits()[0], 2u);
}

TEST_F(AclTest, Ipv6FiveTupleRulesDecideByPrefixProtocolAndPort) {
    const auto a = acl("deny proto udp src 2001:db8::/32 dst 2001:db8:1::/48 sport 1000-2000 dport 53\n");
    EXPECT_FALSE(passes(*a, ipv6({.proto = kUdp, .sport = 1500, .dport = 53})));
    EXPECT_TRUE(passes(*a, ipv6({.proto = kUdp, .sport = 999, .dport = 53})));
    EXPECT_TRUE(passes(*a, ipv6({.proto = kUdp, .sport = 1500, .dport = 54})));
    EXPECT_TRUE(passes(*a, ipv6({.src = "2001:db9::1", .proto = kUdp, .sport = 1500, .dport = 53})));
    EXPECT_TRUE(passes(*a, ipv6({.dst = "2001:db8:2::2", .proto = kUdp, .sport = 1500, .dport = 53})));
    EXPECT_TRUE(passes(*a, ipv6({.proto = kTcp, .sport = 1500, .dport = 53})));
}

TEST_F(AclTest, Ipv6PrefixesLongerThanOneWordCompareEveryBit) {
    const auto a = acl("deny dst 2001:db8:0:0:1::/80\n");  // the first five groups
    EXPECT_FALSE(passes(*a, ipv6({.dst = "2001:db8::1:0:0:5"})));
    EXPECT_FALSE(passes(*a, ipv6({.dst = "2001:db8::1:ffff:ffff:ffff"})));
    EXPECT_TRUE(passes(*a, ipv6({.dst = "2001:db8::2:0:0:5"})));      // group 5
    EXPECT_TRUE(passes(*a, ipv6({.dst = "2001:db8:0:1:1::5"})));      // group 4
    EXPECT_TRUE(passes(*a, ipv6({.dst = "2001:db9::1:0:0:5"})));      // group 2
}

TEST_F(AclTest, AddressesSayWhichFamilyARuleIsFor) {
    const auto a = acl("deny proto tcp dport 80 src 0.0.0.0/0\ndeny family ipv6 proto udp\ndeny proto tcp dport 22\n");
    EXPECT_FALSE(passes(*a, ipv4({.dport = 80})));
    EXPECT_TRUE(passes(*a, ipv6({.dport = 80})));   // the first rule is IPv4 only
    EXPECT_FALSE(passes(*a, ipv6({.proto = kUdp})));
    EXPECT_TRUE(passes(*a, ipv4({.proto = kUdp})));  // the second is IPv6 only
    EXPECT_FALSE(passes(*a, ipv4({.dport = 22})));   // the third is for both
    EXPECT_FALSE(passes(*a, ipv6({.dport = 22})));
}

TEST_F(AclTest, HigherPrioWinsAndAmongEqualPriosTheEarlierLine) {
    const auto a = acl("permit proto tcp\n"
                       "deny proto tcp dport 22 prio 5\n"
                       "permit proto tcp dport 22 src 192.0.2.0/24 prio 5\n"
                       "deny proto udp\n"
                       "permit proto udp\n");
    EXPECT_FALSE(passes(*a, ipv4({.dport = 22})));              // prio 5 deny beats line 1
    EXPECT_TRUE(passes(*a, ipv4({.dport = 80})));
    EXPECT_FALSE(passes(*a, ipv4({.proto = kUdp})));            // line 4 before line 5
    EXPECT_EQ(a->rule_hits(), (std::vector<uint64_t>{1, 1, 0, 1, 0}));
}

TEST_F(AclTest, TheDefaultDecidesWhenNoPermitOrDenyRuleMatches) {
    const auto denying = acl("permit proto tcp dport 80\n", "deny");
    EXPECT_TRUE(passes(*denying, ipv4({.dport = 80})));
    EXPECT_FALSE(passes(*denying, ipv4({.dport = 81})));
    EXPECT_FALSE(passes(*denying, ipv6({.dport = 81})));
    EXPECT_EQ(dropped(*denying, "default_deny"), 2u);
    EXPECT_EQ(dropped(*denying, "denied"), 0u);

    const auto permitting = acl("deny proto tcp dport 80\n", "permit");
    EXPECT_TRUE(passes(*permitting, ipv4({.dport = 81})));
    EXPECT_FALSE(passes(*permitting, ipv4({.dport = 80})));
}

TEST_F(AclTest, AnEmptyRulesFileAppliesTheDefaultToEverything) {
    const auto a = acl("# nothing yet\n", "deny");
    EXPECT_FALSE(passes(*a, ipv4({})));
    EXPECT_FALSE(passes(*a, ipv6({})));
    EXPECT_FALSE(passes(*a, arp()));
}

TEST_F(AclTest, NonIpPacketsMatchNoRuleAndGetTheDefault) {
    const auto permitting = acl("deny\n", "permit");  // a rule matching every IP packet
    EXPECT_TRUE(passes(*permitting, arp()));
    EXPECT_FALSE(passes(*permitting, ipv4({})));
    EXPECT_EQ(event(*permitting, "not_ip"), 1u);

    const auto denying = acl("permit\n", "deny");
    EXPECT_FALSE(passes(*denying, arp()));
    EXPECT_EQ(dropped(*denying, "default_deny"), 1u);
    EXPECT_TRUE(passes(*denying, ipv6({})));
}

TEST_F(AclTest, PacketsParseDidNotSeeGetTheDefault) {
    const auto a = acl("deny\n", "permit");
    EXPECT_TRUE(passes(*a, ipv4({}), nullptr, false));
    EXPECT_EQ(event(*a, "not_ip"), 1u);
}

TEST_F(AclTest, MarkRulesSetTheFlowMarkWithoutDecidingTheVerdict) {
    const auto a = acl("mark 7 proto tcp dport 80\n"
                       "mark 9 proto tcp dport 80 prio 1\n"
                       "mark 0 proto udp\n"
                       "deny src 10.0.0.0/8\n");
    uint32_t mark = 0;
    EXPECT_TRUE(passes(*a, ipv4({.dport = 80}), &mark));
    EXPECT_EQ(mark, 9u);  // the higher prio
    EXPECT_TRUE(passes(*a, ipv4({.proto = kUdp}), &mark));
    EXPECT_EQ(mark, 0u);
    EXPECT_TRUE(passes(*a, ipv4({.dport = 81}), &mark));
    EXPECT_EQ(mark, UINT32_MAX) << "unmarked";
    EXPECT_FALSE(passes(*a, ipv4({.src = "10.0.0.1", .dport = 80})));  // marked, but denied
    EXPECT_EQ(event(*a, "marked"), 2u);
    EXPECT_EQ(a->rule_hits(), (std::vector<uint64_t>{0, 1, 1, 1}));
}

TEST_F(AclTest, AMarkLeavesTheRssHashWordAsItWas) {
    const auto a = acl("mark 42\n");
    Burst b;
    b.d[b.n++] = PacketDesc{mbuf_of(ipv4({})), 0, 0, 0, 0};
    b.d[0].mbuf->hash.rss = 0x12345678;
    parse_.process(b);
    a->process(b);
    ASSERT_EQ(b.n, 1);
    uint32_t mark = 0;
    EXPECT_TRUE(packet_mark(b.d[0].mbuf, mark));
    EXPECT_EQ(mark, 42u);
    EXPECT_EQ(b.d[0].mbuf->hash.rss, 0x12345678u);
    EXPECT_TRUE(b.d[0].mbuf->ol_flags & RTE_MBUF_F_RX_FDIR);
    rte_pktmbuf_free(b.d[0].mbuf);
}

TEST_F(AclTest, CountRulesCountWithoutDecidingAndEachRuleKeepsItsHits) {
    const auto a = acl("count proto udp dport 53\n"
                       "count proto icmp\n"
                       "count proto icmp6\n"
                       "deny proto udp\n",
                       "permit");
    EXPECT_FALSE(passes(*a, ipv4({.proto = kUdp, .dport = 53})));  // counted, then denied
    EXPECT_TRUE(passes(*a, ipv4({.proto = kIcmp})));
    EXPECT_TRUE(passes(*a, ipv4({.proto = kIcmp})));
    EXPECT_TRUE(passes(*a, ipv6({.proto = kIcmpv6})));
    // Rules compare protocol numbers: protocol 1 inside IPv6 is still `icmp`.
    EXPECT_TRUE(passes(*a, ipv6({.proto = kIcmp})));
    EXPECT_EQ(event(*a, "counted"), 5u);
    EXPECT_EQ(a->rule_hits(), (std::vector<uint64_t>{1, 3, 1, 1}));
}

TEST_F(AclTest, PortsAreFoundAfterIpv4OptionsAndIpv6ExtensionHeaders) {
    const auto a = acl("deny proto tcp dport 8080\n");
    EXPECT_FALSE(passes(*a, ipv4({.dport = 8080, .options = 8})));
    EXPECT_TRUE(passes(*a, ipv4({.dport = 8081, .options = 8})));
    EXPECT_FALSE(passes(*a, ipv6({.dport = 8080, .hop_by_hop = true})));
    EXPECT_TRUE(passes(*a, ipv6({.dport = 8081, .hop_by_hop = true})));
}

TEST_F(AclTest, ANonFirstFragmentHasPortsZero) {
    const auto a = acl("deny proto udp dport 53\ndeny proto udp sport 0 dport 0 src 198.18.0.0/15\n");
    // A later fragment of a DNS datagram: protocol known, ports not.
    EXPECT_TRUE(passes(*a, ipv4({.proto = kUdp, .dport = 53, .frag = 100})));
    EXPECT_FALSE(passes(*a, ipv4({.src = "198.18.0.1", .proto = kUdp, .dport = 53, .frag = 100})));
    // The first fragment carries the UDP header.
    EXPECT_FALSE(passes(*a, ipv4({.proto = kUdp, .dport = 53, .frag = 0x2000})));
}

TEST_F(AclTest, ATruncatedTransportHeaderHasPortsZeroAndIsReadNoFurther) {
    const auto a = acl("deny proto tcp dport 80\ndeny proto tcp dport 0 src 198.18.0.0/15\n");
    Bytes cut = ipv4({.src = "198.18.0.1", .dport = 80});
    cut.resize(14 + 20 + 10);  // half a TCP header
    EXPECT_FALSE(passes(*a, cut));
    cut = ipv4({.dport = 80});
    cut.resize(14 + 20 + 10);
    EXPECT_TRUE(passes(*a, cut));
    cut.resize(14 + 12);  // half an IPv4 header: not IP to the classifier
    EXPECT_TRUE(passes(*a, cut));
}

TEST_F(AclTest, AMixedBurstKeepsItsOrder) {
    const auto a = acl("deny proto tcp dport 22\n");
    std::vector<Bytes> frames;
    for (uint16_t i = 0; i < kBurstMax; ++i) {
        if (i % 4 == 0) frames.push_back(ipv4({.sport = i, .dport = 22}));
        else if (i % 4 == 1) frames.push_back(ipv6({.sport = i, .dport = 22}));
        else if (i % 4 == 2) frames.push_back(ipv6({.sport = i, .dport = 80}));
        else frames.push_back(ipv4({.sport = i, .dport = 80}));
    }
    frames[31] = arp();
    const std::vector<rte_mbuf*> out = run(*a, frames);
    ASSERT_EQ(out.size(), 16u);  // frames 2, 3, 6, 7, ..., 30, 31
    for (size_t j = 0; j < out.size(); ++j) {
        const uint16_t i = uint16_t((j / 2) * 4 + 2 + j % 2);
        if (i == 31) {
            EXPECT_EQ(rte_pktmbuf_pkt_len(out[j]), arp().size());
        } else {
            const uint8_t* p = rte_pktmbuf_mtod(out[j], const uint8_t*);
            const size_t l4 = i % 4 == 2 ? 14 + 40 : 14 + 20;
            EXPECT_EQ(p[l4] << 8 | p[l4 + 1], i) << "position " << j;
        }
        rte_pktmbuf_free(out[j]);
    }
}

// ---- against tcpdump, on shared captures -----------------------------------------------------

long tcpdump_count(const std::string& file, const std::string& expr) {
    const test::CommandResult r = test::run_command("tcpdump -#qnr '" + file + "' '" + expr + "'");
    long n = 0;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        const auto digits = line.find_first_not_of(' ');
        if (digits != std::string::npos && std::isdigit(static_cast<unsigned char>(line[digits])) &&
            line.find("  ", digits) == line.find_first_not_of("0123456789", digits))
            ++n;
    }
    return n;
}

TEST_F(AclTest, DeniesWhatTheEquivalentTcpdumpFilterMatchesOnSharedCaptures) {
    // Captures without VLAN tags, fragments or IPv6 extension headers before TCP/UDP, where a
    // 5-tuple rule and a tcpdump expression mean the same packets.
    const std::vector<std::pair<std::string, std::string>> equivalents = {
        {"deny proto tcp dport 80", "tcp dst port 80"},
        {"deny proto tcp dport 443", "tcp dst port 443"},
        {"deny proto udp dport 53", "udp dst port 53"},
        {"deny proto udp sport 53", "udp src port 53"},
        {"deny src 10.0.0.0/8", "ip src net 10.0.0.0/8"},
        {"deny dst 192.168.0.0/16", "ip dst net 192.168.0.0/16"},
        {"deny proto tcp sport 1024-65535 dport 80-443", "tcp src portrange 1024-65535 and tcp dst portrange 80-443"},
        {"deny family ipv6", "ip6"},
        {"deny family ipv4 proto tcp", "ip and tcp"},
        {"deny src fe80::/10", "ip6 src net fe80::/10"},
    };
    for (const char* name : {"pcpp__example.pcap", "suricata__tls-subjectaltname__input.pcap"}) {
        const std::string path = test::pcaps_dir() + "/" + name;
        const CaptureFile capture(path, Location{path});
        for (const auto& [rule, expr] : equivalents) {
            SCOPED_TRACE(std::string(name) + ": '" + rule + "' vs tcpdump '" + expr + "'");
            const auto a = acl(rule + "\n");
            const auto& records = capture.records();
            for (size_t at = 0; at < records.size();) {
                Burst b;
                while (b.n < kBurstMax && at < records.size()) {
                    const CaptureRecord& r = records[at++];
                    b.d[b.n++] = PacketDesc{rte_pktmbuf_copy(r.frame, test_pool().get(), 0, UINT32_MAX), 0,
                                            saturate_length(r.length), 0, 0};
                }
                parse_.process(b);
                a->process(b);
                for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
            }
            EXPECT_EQ(dropped(*a, "denied"), uint64_t(tcpdump_count(path, expr)));
            EXPECT_EQ(a->rule_hits()[0], dropped(*a, "denied"));
        }
    }
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

TEST_F(AclTest, EveryReadableSharedCaptureRunsThroughWithoutReadingPastAFrame) {
    const auto a = acl(test::read_file(test::source_root() + "/conf/data/firewall.rules"), "deny");
    const uint64_t packets = run_every_shared_capture(parse_, *a, test_pool().get());
    EXPECT_GT(packets, 90000u);
    EXPECT_GT(dropped(*a, "default_deny"), 0u);
    EXPECT_GT(dropped(*a, "denied") + event(*a, "counted") + event(*a, "marked"), 0u);
}

}  // namespace
}  // namespace tp
