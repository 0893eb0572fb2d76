// lpm_route: what a user relies on — the longest matching prefix picks the port, for IPv4 and
// IPv6; TTL and hop limit go down by one and a packet that would leave with 0 is dropped; the
// IPv4 header checksum stays valid (as rte_ipv4_cksum computes it); every mistake in a routes
// file is reported as `file:line:` before traffic.
#include <gtest/gtest.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
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
#include "stages/lpm_route.hpp"
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

Bytes ethernet(uint16_t ether_type, const Bytes& l3) {
    Bytes b = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a};
    put16(b, ether_type);
    put(b, l3);
    return b;
}

const Bytes kUdp = {0x9c, 0x40, 0, 53, 0, 12, 0, 0, 'p', 'i', 'n', 'g'};

// IPv4/UDP to `dst` with a correct header checksum (`options` bytes of NOP options).
Bytes ipv4(const char* dst, uint8_t ttl = 64, size_t options = 0, const char* src = "192.0.2.1") {
    const size_t header = 20 + options;
    Bytes ip = {uint8_t(0x40 | header / 4), 0};
    put16(ip, uint16_t(header + kUdp.size()));
    put16(ip, 0x1234);
    put16(ip, 0x4000);
    ip.push_back(ttl);
    ip.push_back(17);
    put16(ip, 0);
    put(ip, address_bytes(src));
    put(ip, address_bytes(dst));
    ip.resize(header, 1);
    const uint16_t sum = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip.data()));
    std::memcpy(ip.data() + 10, &sum, 2);  // rte_ipv4_cksum answers in network order
    put(ip, kUdp);
    return ethernet(0x0800, ip);
}

Bytes ipv6(const char* dst, uint8_t hop_limit = 64) {
    Bytes ip = {0x60, 0, 0, 0};
    put16(ip, uint16_t(kUdp.size()));
    ip.push_back(17);
    ip.push_back(hop_limit);
    put(ip, address_bytes("2001:db8:ffff::1"));
    put(ip, address_bytes(dst));
    put(ip, kUdp);
    return ethernet(0x86dd, ip);
}

Bytes arp() { return ethernet(0x0806, Bytes(28, 0x01)); }

// ---- stages ----------------------------------------------------------------------------------

MbufPool& test_pool() {
    static MbufPool pool([] {
        MbufPoolSpec spec;
        spec.name = "lpm_test";
        spec.mbufs = 4095;
        return spec;
    }());
    return pool;
}

ParamValues params_for(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

// What became of one packet.
struct Routed {
    bool kept = false;
    uint8_t port = 0;        // descriptor
    uint16_t mbuf_port = 0;  // mbuf
    Bytes frame;
};

class LpmRouteTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_lpm"};
    const std::string dir_ = scratch_.path();

    std::string write(const std::string& text) {
        const std::string path = dir_ + "/routes" + std::to_string(files_++) + ".txt";
        std::ofstream(path) << text;
        return path;
    }

    std::unique_ptr<LpmRoute> router(const std::string& routes, const std::string& default_port = "-1") {
        auto r = std::make_unique<LpmRoute>(
            params_for("lpm_route", {{"routes", write(routes)}, {"default_port", default_port}}));
        StageEnv env;
        env.node_name = "route";
        r->open(env);
        return r;
    }

    std::string refusal(const std::string& routes, std::string* path = nullptr) {
        const std::string p = write(routes);
        if (path != nullptr) *path = p;
        LpmRoute r(params_for("lpm_route", {{"routes", p}}));
        StageEnv env;
        try {
            r.open(env);
        } catch (const LocatedError& e) {
            return e.what();
        }
        return "";
    }

    std::vector<Routed> run(LpmRoute& r, const std::vector<Bytes>& frames) {
        Burst b;
        for (const Bytes& f : frames) {
            rte_mbuf* m = rte_pktmbuf_alloc(test_pool().get());
            std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
            b.d[b.n] = PacketDesc{m, 0, saturate_length(uint32_t(f.size())), 7, 0};
            m->port = 7;
            ++b.n;
        }
        parse_.process(b);
        r.process(b);
        std::vector<Routed> out;
        for (const PacketDesc& d : b) {
            Routed x;
            x.kept = true;
            x.port = d.port;
            x.mbuf_port = d.mbuf->port;
            const uint8_t* p = rte_pktmbuf_mtod(d.mbuf, const uint8_t*);
            x.frame.assign(p, p + rte_pktmbuf_data_len(d.mbuf));
            out.push_back(x);
            rte_pktmbuf_free(d.mbuf);
        }
        return out;
    }
    Routed route(LpmRoute& r, const Bytes& frame) {
        const std::vector<Routed> out = run(r, {frame});
        return out.empty() ? Routed{} : out[0];
    }

    Parse parse_{params_for("parse", {})};
    int files_ = 0;
};

uint64_t dropped(const Stage& s, const std::string& reason) {
    for (size_t i = 0; i < s.drop_reasons().size(); ++i)
        if (s.drop_reasons()[i] == reason) return s.stats().reason[i].get();
    ADD_FAILURE() << "no drop reason " << reason;
    return 0;
}

bool ipv4_checksum_valid(const Bytes& frame, size_t l2 = 14) {
    return rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(frame.data() + l2)) == 0;
}

// ---- registration and routes file ------------------------------------------------------------

TEST(LpmRouteRegistration, IsAProcessorWithItsParametersDocumented) {
    const StageInfo* info = StageRegistry::instance().find("lpm_route");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    ASSERT_NE(info->find_param("routes"), nullptr);
    EXPECT_TRUE(info->find_param("routes")->required);
    ASSERT_NE(info->find_param("default_port"), nullptr);
    EXPECT_EQ(info->find_param("default_port")->default_text, "-1");
    for (const ParamSpec& p : info->params) EXPECT_FALSE(p.help.empty()) << p.name;
}

TEST_F(LpmRouteTest, EveryMistakeInTheRoutesFileIsReportedAtItsFileAndLine) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"10.0.0.0/8", "1: expected 'PREFIX/LEN PORT', got 1 word"},
        {"# routes\n10.0.0.0/8 1 # fine\n10.1.0.0/16 2 3", "3: expected 'PREFIX/LEN PORT', got 3 words"},
        {"10.0.0.0/33 1", "1: bad prefix: bad prefix length in '10.0.0.0/33': expected 0-32"},
        {"2001:db8::/129 1", "1: bad prefix: bad prefix length in '2001:db8::/129': expected 0-128"},
        {"10.0.0.1/8 1", "1: bad prefix: '10.0.0.1/8' has bits set beyond its prefix length (meant 10.0.0.0/8?)"},
        {"2001:db8::1/32 1", "1: bad prefix: '2001:db8::1/32' has bits set beyond its prefix length (meant 2001:db8::/32?)"},
        {"gateway/8 1", "1: bad prefix: 'gateway' is not an IPv4 or IPv6 address"},
        {"10.0.0.0/8 128", "1: bad port '128': expected 0-127"},
        {"10.0.0.0/8 eth0", "1: bad port 'eth0': expected 0-127"},
        {"10.0.0.0/8 -1", "1: bad port '-1': expected 0-127"},
        {"10.0.0.0/8 1\n\n# again\n10.0.0.0/8 2", "4: prefix 10.0.0.0/8 is already routed at line 1"},
        {"2001:db8::/32 1\n2001:0db8:0::/32 2", "2: prefix 2001:db8::/32 is already routed at line 1"},
    };
    for (const auto& [routes, message] : cases) {
        std::string path;
        const std::string error = refusal(routes, &path);
        EXPECT_EQ(error, path + ":" + message) << "routes:\n" << routes;
    }
}

TEST_F(LpmRouteTest, AMissingRoutesFileIsReportedWhereTheUserNamedIt) {
    LpmRoute r(params_for("lpm_route", {{"routes", dir_ + "/none.txt"}}));
    StageEnv env;
    try {
        r.open(env);
        FAIL() << "opened";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), "app.yaml:2:5: cannot read '" + dir_ + "/none.txt': No such file or directory");
    }
}

TEST_F(LpmRouteTest, ADefaultPortOutOfRangeIsRefusedAtTheParameter) {
    for (const char* bad : {"256", "-2"}) {
        try {
            LpmRoute r(params_for("lpm_route", {{"routes", write("")}, {"default_port", bad}}));
            FAIL() << bad << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(e.where().str(), "app.yaml:3:5");
        }
    }
}

TEST_F(LpmRouteTest, TheMemoryTheTablesNeedIsKnownBeforeOpening) {
    constexpr uint64_t kFirstLevel = 64ull << 20;  // 2^24 entries of 4 bytes, per family
    const uint64_t v4 = LpmRoute::memory_hint(params_for("lpm_route", {{"routes", write("10.0.0.0/8 1\n")}}));
    const uint64_t both = LpmRoute::memory_hint(
        params_for("lpm_route", {{"routes", write("10.0.0.0/8 1\n2001:db8::/32 2\n")}}));
    EXPECT_GE(v4, kFirstLevel);
    EXPECT_LT(v4, 2 * kFirstLevel);
    EXPECT_GE(both, 2 * kFirstLevel);
    EXPECT_EQ(LpmRoute::memory_hint(params_for("lpm_route", {{"routes", write("0.0.0.0/0 1\n")}})), 0u)
        << "a default route alone needs no table";
    EXPECT_EQ(LpmRoute::memory_hint(params_for("lpm_route", {{"routes", dir_ + "/none"}})), 0u);
    const StageInfo* info = StageRegistry::instance().find("lpm_route");
    EXPECT_EQ(info->memory_hint(params_for("lpm_route", {{"routes", write("10.0.0.0/8 1\n")}})), v4);
}

TEST_F(LpmRouteTest, TheShippedExampleRoutesLoad) {
    const auto r = router(test::read_file(test::source_root() + "/conf/data/routes.txt"));
    EXPECT_GE(r->routes().size(), 8u);
}

// ---- forwarding ------------------------------------------------------------------------------

TEST_F(LpmRouteTest, TheLongestMatchingIpv4PrefixPicksThePort) {
    const auto r = router("10.0.0.0/8 1\n10.1.0.0/16 2\n10.1.2.0/24 3\n10.1.2.128/25 4\n10.1.2.200 5\n");
    const std::vector<std::pair<const char*, int>> cases = {
        {"10.9.9.9", 1}, {"10.1.9.9", 2}, {"10.1.2.1", 3}, {"10.1.2.127", 3},
        {"10.1.2.128", 4}, {"10.1.2.255", 4}, {"10.1.2.200", 5}, {"11.0.0.1", -1},
    };
    for (const auto& [dst, port] : cases) {
        SCOPED_TRACE(dst);
        const Routed out = route(*r, ipv4(dst));
        EXPECT_EQ(out.kept, port >= 0);
        if (!out.kept) continue;
        EXPECT_EQ(out.port, port);
        EXPECT_EQ(out.mbuf_port, port);
    }
    EXPECT_EQ(dropped(*r, "no_route"), 1u);
}

TEST_F(LpmRouteTest, TheLongestMatchingIpv6PrefixPicksThePort) {
    const auto r = router("2001:db8::/32 1\n2001:db8:1::/48 2\n2001:db8:1:2:3::/80 3\n2001:db8:1:2:3::9 4\n"
                          "10.0.0.0/8 9\n");
    const std::vector<std::pair<const char*, int>> cases = {
        {"2001:db8:5::1", 1}, {"2001:db8:1:9::1", 2}, {"2001:db8:1:2:3:1::1", 3},
        {"2001:db8:1:2:3::9", 4}, {"2001:db9::1", -1}, {"::ffff:10.0.0.1", -1},
    };
    for (const auto& [dst, port] : cases) {
        SCOPED_TRACE(dst);
        const Routed out = route(*r, ipv6(dst));
        EXPECT_EQ(out.kept, port >= 0);
        if (out.kept) {
            EXPECT_EQ(out.port, port);
        }
    }
}

TEST_F(LpmRouteTest, DefaultRoutesCatchEverythingOfTheirFamily) {
    const auto r = router("0.0.0.0/0 5\n::/0 6\n10.0.0.0/8 1\n");
    EXPECT_EQ(route(*r, ipv4("203.0.113.9")).port, 5);
    EXPECT_EQ(route(*r, ipv4("10.0.0.1")).port, 1);
    EXPECT_EQ(route(*r, ipv6("2001:db8::1")).port, 6);
}

TEST_F(LpmRouteTest, AMissGoesToTheDefaultPortWhenOneIsSet) {
    const auto r = router("10.0.0.0/8 1\n", "9");
    EXPECT_EQ(route(*r, ipv4("11.0.0.1")).port, 9);
    EXPECT_EQ(route(*r, ipv6("2001:db8::1")).port, 9);
    EXPECT_EQ(route(*r, ipv4("10.0.0.1")).port, 1);
    EXPECT_EQ(r->stats().event[0].get(), 2u);
    EXPECT_EQ(r->events()[0], "default_route");
}

TEST_F(LpmRouteTest, NonIpPacketsAreDroppedAsNotIpEvenWithADefaultPort) {
    const auto r = router("0.0.0.0/0 1\n", "2");
    EXPECT_FALSE(route(*r, arp()).kept);
    Bytes cut = ipv4("10.0.0.1");
    cut.resize(14 + 16);  // an IPv4 header cut short
    EXPECT_FALSE(route(*r, cut).kept);
    EXPECT_EQ(dropped(*r, "not_ip"), 2u);
}

TEST_F(LpmRouteTest, TtlIsDecrementedAndTheIpv4ChecksumStaysValid) {
    const auto r = router("0.0.0.0/0 1\n");
    for (const size_t options : {0u, 4u, 40u}) {
        const Routed out = route(*r, ipv4("198.51.100.7", 64, options));
        ASSERT_TRUE(out.kept);
        EXPECT_EQ(out.frame[14 + 8], 63);
        EXPECT_TRUE(ipv4_checksum_valid(out.frame)) << options << " option bytes";
    }
}

TEST_F(LpmRouteTest, TheIncrementalChecksumEqualsAFreshComputationForEveryTtlAndHeader) {
    const auto r = router("0.0.0.0/0 1\n");
    std::mt19937 rng(7);
    for (int n = 0; n < 2000; ++n) {
        const uint8_t ttl = uint8_t(2 + rng() % 254);
        char dst[16], src[16];
        auto octet = [&] { return unsigned(rng() % 256); };
        std::snprintf(dst, sizeof dst, "%u.%u.%u.%u", octet(), octet(), octet(), octet());
        std::snprintf(src, sizeof src, "%u.%u.%u.%u", octet(), octet(), octet(), octet());
        Bytes in = ipv4(dst, ttl, (rng() % 11) * 4, src);
        in[14 + 1] = uint8_t(rng());  // TOS: more variety in the sum
        std::memset(in.data() + 14 + 10, 0, 2);
        const uint16_t sum = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(in.data() + 14));
        std::memcpy(in.data() + 14 + 10, &sum, 2);
        const Routed out = route(*r, in);
        ASSERT_TRUE(out.kept);
        ASSERT_EQ(out.frame[14 + 8], ttl - 1);
        Bytes fresh = out.frame;
        ASSERT_GE(fresh.size(), 34u);
        fresh[14 + 10] = fresh[14 + 11] = 0;
        const uint16_t want = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(fresh.data() + 14));
        uint16_t got;
        std::memcpy(&got, out.frame.data() + 14 + 10, 2);
        ASSERT_EQ(got, want) << "ttl " << int(ttl) << " dst " << dst << " src " << src;
    }
}

TEST_F(LpmRouteTest, AWrongChecksumStaysWrong) {
    const auto r = router("0.0.0.0/0 1\n");
    Bytes in = ipv4("198.51.100.7");
    in[14 + 11] ^= 0x01;
    const Routed out = route(*r, in);
    ASSERT_TRUE(out.kept);
    EXPECT_FALSE(ipv4_checksum_valid(out.frame));
}

TEST_F(LpmRouteTest, APacketThatWouldLeaveWithTtlZeroIsDroppedAsTtlExceeded) {
    const auto r = router("0.0.0.0/0 1\n::/0 1\n");
    EXPECT_FALSE(route(*r, ipv4("10.0.0.1", 1)).kept);
    EXPECT_FALSE(route(*r, ipv4("10.0.0.1", 0)).kept);
    const Routed two = route(*r, ipv4("10.0.0.1", 2));
    ASSERT_TRUE(two.kept);
    EXPECT_EQ(two.frame[14 + 8], 1);
    EXPECT_TRUE(ipv4_checksum_valid(two.frame));
    EXPECT_FALSE(route(*r, ipv6("2001:db8::1", 1)).kept);
    EXPECT_FALSE(route(*r, ipv6("2001:db8::1", 0)).kept);
    EXPECT_EQ(dropped(*r, "ttl_exceeded"), 4u);
}

TEST_F(LpmRouteTest, TheIpv6HopLimitIsDecremented) {
    const auto r = router("2001:db8::/32 3\n");
    const Routed out = route(*r, ipv6("2001:db8::1", 64));
    ASSERT_TRUE(out.kept);
    EXPECT_EQ(out.frame[14 + 7], 63);
    Bytes want = ipv6("2001:db8::1", 63);
    EXPECT_EQ(out.frame, want) << "nothing but the hop limit changes";
}

TEST_F(LpmRouteTest, AMixedBurstKeepsItsOrderAndEachPacketItsOwnPort) {
    const auto r = router("10.0.0.0/8 1\n10.1.0.0/16 2\n2001:db8::/32 3\n");
    std::vector<Bytes> frames;
    std::vector<int> want;
    for (int i = 0; i < kBurstMax; ++i) {
        switch (i % 5) {
            case 0: frames.push_back(ipv4("10.0.0.1")); want.push_back(1); break;
            case 1: frames.push_back(ipv6("2001:db8::1")); want.push_back(3); break;
            case 2: frames.push_back(ipv4("10.1.0.1")); want.push_back(2); break;
            case 3: frames.push_back(arp()); break;
            default: frames.push_back(ipv4("12.0.0.1")); break;
        }
    }
    const std::vector<Routed> out = run(*r, frames);
    ASSERT_EQ(out.size(), want.size());
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].port, want[i]) << i;
}

TEST_F(LpmRouteTest, OnASharedCaptureEveryValidIpv4ChecksumStaysValid) {
    const std::string path = test::pcaps_dir() + "/pcpp__example.pcap";
    const CaptureFile capture(path, Location{path});
    const auto r = router("0.0.0.0/0 1\n::/0 2\n");
    uint64_t checked = 0;
    uint64_t packets = 0;
    const auto& records = capture.records();
    for (size_t at = 0; at < records.size();) {
        Burst b;
        while (b.n < kBurstMax && at < records.size()) {
            const CaptureRecord& rec = records[at++];
            b.d[b.n++] = PacketDesc{rte_pktmbuf_copy(rec.frame, test_pool().get(), 0, UINT32_MAX), 0,
                                    saturate_length(rec.length), 0, 0};
        }
        packets += b.n;
        parse_.process(b);
        struct Before {
            const rte_mbuf* m;
            bool valid;
            uint8_t ttl;
        };
        std::vector<Before> before;
        for (const PacketDesc& d : b) {
            const auto* ip = rte_pktmbuf_mtod_offset(d.mbuf, const rte_ipv4_hdr*, d.mbuf->l2_len);
            const bool v4 = (d.type & ptype::kL3Mask) == ptype::kL3Ipv4 && d.mbuf->l3_len != 0;
            before.push_back({d.mbuf, v4 && rte_ipv4_cksum(ip) == 0, v4 ? ip->time_to_live : uint8_t(0)});
        }
        r->process(b);
        for (const PacketDesc& d : b) {
            const auto was = std::find_if(before.begin(), before.end(), [&](const Before& x) { return x.m == d.mbuf; });
            ASSERT_NE(was, before.end());
            if (was->valid) {
                const auto* ip = rte_pktmbuf_mtod_offset(d.mbuf, const rte_ipv4_hdr*, d.mbuf->l2_len);
                EXPECT_EQ(rte_ipv4_cksum(ip), 0) << "a record before " << at;
                EXPECT_EQ(ip->time_to_live, was->ttl - 1);
                ++checked;
            }
            EXPECT_EQ(d.port, (d.type & ptype::kL3Mask) == ptype::kL3Ipv4 ? 1 : 2);
            rte_pktmbuf_free(d.mbuf);
        }
    }
    EXPECT_GT(checked, 4000u);
    EXPECT_EQ(r->stats().drops.get(), dropped(*r, "ttl_exceeded") + dropped(*r, "not_ip"));
    EXPECT_EQ(dropped(*r, "no_route"), 0u);
    EXPECT_EQ(packets, records.size());
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

TEST_F(LpmRouteTest, EveryReadableSharedCaptureRunsThroughWithoutReadingPastAFrame) {
    const auto r = router(test::read_file(test::source_root() + "/conf/data/routes.txt"));
    const uint64_t packets = run_every_shared_capture(parse_, *r, test_pool().get());
    EXPECT_GT(packets, 90000u);
    EXPECT_GT(dropped(*r, "not_ip"), 0u);
    EXPECT_LT(r->stats().drops.get(), packets);
}

}  // namespace
}  // namespace tp
