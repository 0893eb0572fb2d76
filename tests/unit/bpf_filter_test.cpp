// bpf_filter: what a user relies on — the packets it keeps are exactly those tcpdump prints
// for the same expression on the same capture, with DPDK's JIT and with its interpreter; a bad
// or unsupported expression is refused at the `expr` parameter before traffic.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "descriptors/wire_length.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/bpf_filter.hpp"
#include "framework/capture/capture_file.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;
using Bytes = std::vector<uint8_t>;

// ---- helpers ---------------------------------------------------------------------------------

// Parameters as a config gives them: the node on line 1 of app.yaml, each given key on its own
// line after it, in order.
ParamValues bpf_params(const Given& given) { return test::stage_params("bpf_filter", given); }

std::unique_ptr<BpfFilter> opened_filter(const std::string& expr, bool jit = true, bool invert = false) {
    auto f = std::make_unique<BpfFilter>(
        bpf_params({{"expr", expr}, {"jit", jit ? "true" : "false"}, {"invert", invert ? "true" : "false"}}));
    StageEnv env;
    env.node_name = "filter";
    f->open(env);
    return f;
}

MbufPool& test_pool() {
    static MbufPool pool([] {
        MbufPoolSpec spec;
        spec.name = "bpf_test";
        spec.mbufs = 4095;
        spec.data_room = 2048;
        return spec;
    }());
    return pool;
}

rte_mbuf* mbuf_of(const Bytes& frame) {
    rte_mbuf* m = rte_pktmbuf_alloc(test_pool().get());
    char* at = rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size()));
    if (!frame.empty()) std::memcpy(at, frame.data(), frame.size());
    wire_length(m, wire_length_offset()) = m->pkt_len;  // as a source sets it
    return m;
}

// A chain holding `frame` split after `first` bytes.
rte_mbuf* chain_of(const Bytes& frame, size_t first) {
    rte_mbuf* head = rte_pktmbuf_alloc(test_pool().get());
    rte_mbuf* tail = rte_pktmbuf_alloc(test_pool().get());
    std::memcpy(rte_pktmbuf_append(head, static_cast<uint16_t>(first)), frame.data(), first);
    std::memcpy(rte_pktmbuf_append(tail, static_cast<uint16_t>(frame.size() - first)),
                frame.data() + first, frame.size() - first);
    EXPECT_EQ(rte_pktmbuf_chain(head, tail), 0);
    wire_length(head, wire_length_offset()) = head->pkt_len;
    return head;
}

// Runs one packet through `f`; true when it was kept (and frees it either way).
bool keeps(BpfFilter& f, rte_mbuf* m) {
    Burst b;
    b.n = 1;
    b.d[0] = PacketDesc{m, 0, saturate_length(rte_pktmbuf_pkt_len(m)), 0, 0};
    f.process(b);
    if (b.n == 1) rte_pktmbuf_free(b.d[0].mbuf);
    return b.n == 1;
}

// Ethernet / IPv4 / TCP from port 40000 to `dport`, with `data` payload bytes.
Bytes ipv4_tcp(uint16_t dport, size_t data = 0) {
    Bytes f = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x08, 0x00};
    const uint16_t total = static_cast<uint16_t>(40 + data);
    const Bytes ip = {0x45, 0, uint8_t(total >> 8), uint8_t(total), 0, 1, 0x40, 0, 64, 6, 0, 0,
                      10, 0, 0, 1, 192, 168, 1, 2};
    f.insert(f.end(), ip.begin(), ip.end());
    const Bytes tcp = {0x9c, 0x40, uint8_t(dport >> 8), uint8_t(dport), 0, 0, 0, 1, 0, 0, 0, 0,
                       0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0};
    f.insert(f.end(), tcp.begin(), tcp.end());
    f.resize(f.size() + data, 0xab);
    return f;
}

// ---- tcpdump parity --------------------------------------------------------------------------

// Protocols, ports, hosts, nets, VLAN, MPLS, PPPoE, IPv6, TCP flags, lengths, payload bytes,
// tunnels (Geneve walks its options with scratch memory), and indirect loads of every size.
const std::vector<std::string>& expressions() {
    static const std::vector<std::string> list = {
        "ip",
        "ip6",
        "arp",
        "tcp",
        "udp",
        "icmp",
        "icmp6",
        "tcp port 80",
        "udp port 53",
        "port 443",
        "tcp port 7000",
        "src port 53 or dst port 53",
        "portrange 1-1023",
        "host 127.0.0.1",
        "net 10.0.0.0/8",
        "net 192.168.0.0/16",
        "src net 172.16.0.0/12",
        "ip6 and tcp",
        "ip6 and udp",
        "ip6 net fe80::/10",
        "vlan",
        "vlan and tcp",
        "vlan 4093",
        "vlan 200 or vlan 2001",
        "mpls",
        "pppoes",
        "greater 100",
        "less 60",
        "len > 1000",
        "tcp[tcpflags] & tcp-syn != 0",
        "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0",
        "tcp[tcpflags] == tcp-ack",
        "ip[8] < 64",
        "ip and ip[6:2] & 0x3fff != 0",
        "ip and not tcp and not udp",
        "not ip and not ip6",
        "ether broadcast",
        "ether multicast",
        "ip multicast",
        "ip6 multicast",
        "ip[1] & 0xfc != 0",
        "ip6 and ip6[6] = 0",
        "tcp and tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
        "udp and udp[8:2] = 0x0800 or geneve",
    };
    return list;
}

// Packets tcpdump prints for `expr` on `file`, counted by its -# numbers (one packet may
// print several lines).
struct TcpdumpCount {
    long packets = 0;
    int status = -1;
    std::string err;
};

TcpdumpCount tcpdump_count(const std::string& file, const std::string& expr) {
    TcpdumpCount c;
    const test::CommandResult r = test::run_command("tcpdump -#qnr '" + file + "' '" + expr + "'");
    c.status = r.status;
    c.err = r.err;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        const auto digits = line.find_first_not_of(' ');
        if (digits != std::string::npos && std::isdigit(static_cast<unsigned char>(line[digits])) &&
            line.find("  ", digits) == line.find_first_not_of("0123456789", digits))
            ++c.packets;
    }
    return c;
}

// Packets `filter` keeps from a fresh copy of every record of `capture` (copies, because the
// filter frees what it drops), run in bursts as the runtime would.
uint64_t kept_by(BpfFilter& filter, const CaptureFile& capture) {
    uint64_t kept = 0;
    const auto& records = capture.records();
    for (size_t at = 0; at < records.size();) {
        Burst b;
        while (b.n < kBurstMax && at < records.size()) {
            const CaptureRecord& r = records[at++];
            rte_mbuf* m = rte_pktmbuf_copy(r.frame, test_pool().get(), 0, UINT32_MAX);
            EXPECT_NE(m, nullptr);
            wire_length(m, wire_length_offset()) = r.wire_length;  // as the pcap source sets it
            b.d[b.n++] = PacketDesc{m, 0, saturate_length(r.length), 0, 0};
        }
        filter.process(b);
        kept += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    return kept;
}


// Whether the file itself is Ethernet, as libpcap reads its header (the pcap source may also
// turn other link types into Ethernet, but then tcpdump filters different bytes).
// An Ethernet capture libpcap reads as far as the pcap source does (pcapng with interfaces of
// other link types past the first stops libpcap, so tcpdump has no count to compare with).
bool ethernet_file(const std::string& path) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    if (p == nullptr) return false;
    bool ethernet = pcap_datalink(p) == DLT_EN10MB;
    pcap_pkthdr* h;
    const u_char* data;
    int rc;
    while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
    }
    if (rc == PCAP_ERROR && std::string(pcap_geterr(p)).find("different from the") != std::string::npos) ethernet = false;
    pcap_close(p);
    return ethernet;
}

std::unique_ptr<CaptureFile> load_if_readable(const std::string& path) {
    if (!ethernet_file(path)) return nullptr;
    try {
        return std::make_unique<CaptureFile>(path, Location{path});
    } catch (const LocatedError&) {
        return nullptr;  // refused by the pcap source: nothing a pipeline could filter
    }
}

// `len` (greater, less) is the wire length, as in tcpdump, so tcpdump reads the capture itself,
// except where the source skips records: those with no captured bytes (tcpdump still tests
// their `len`), which tcpdump then reads from a copy without them. Returns "" when the capture
// needs no copy.
std::string without_empty_records(const std::string& path, const std::string& dir) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* in = pcap_open_offline(path.c_str(), err);
    if (in == nullptr) return "";
    std::vector<std::pair<pcap_pkthdr, std::string>> records;
    bool empty = false;
    pcap_pkthdr* h;
    const u_char* data;
    while (pcap_next_ex(in, &h, &data) == 1) {
        if (h->caplen == 0) empty = true;
        else records.emplace_back(*h, std::string(reinterpret_cast<const char*>(data), h->caplen));
    }
    pcap_close(in);
    if (!empty) return "";
    const std::string copy = dir + "/" + fs::path(path).filename().string() + ".held.pcap";
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 262144);
    pcap_dumper_t* out = pcap_dump_open(dead, copy.c_str());
    EXPECT_NE(out, nullptr) << pcap_geterr(dead);
    for (auto& [hdr, bytes] : records)
        pcap_dump(reinterpret_cast<u_char*>(out), &hdr, reinterpret_cast<const u_char*>(bytes.data()));
    pcap_dump_close(out);
    pcap_close(dead);
    return copy;
}

class TcpdumpParity : public testing::TestWithParam<std::string> {
protected:
    test::ScratchDir scratch_{"tp_bpf_filter"};
    const std::string dir_ = scratch_.path();
};

TEST_P(TcpdumpParity, KeepsExactlyThePacketsTcpdumpPrints) {
    const std::string path = test::pcaps_dir() + "/" + GetParam();
    const std::unique_ptr<CaptureFile> capture = load_if_readable(path);
    if (!capture) {
        GTEST_SKIP() << "not an Ethernet capture the pcap source reads";
    }
    const std::string held = without_empty_records(path, dir_);
    const std::string oracle = held.empty() ? path : held;
    for (const std::string& expr : expressions()) {
        SCOPED_TRACE("expr '" + expr + "'" + (held.empty() ? "" : " (tcpdump on " + held + ")"));
        const TcpdumpCount want = tcpdump_count(oracle, expr);
        // A file cut inside a record, or a damaged record, makes tcpdump exit 1 after printing the
        // records before it: those the source replays.
        if (!capture->truncated() && capture->error().empty()) {
            EXPECT_EQ(want.status, 0) << want.err;
        }
        for (const bool jit : {true, false}) {
            const auto filter = opened_filter(expr, jit);
            EXPECT_EQ(filter->jitted(), jit);
            EXPECT_EQ(kept_by(*filter, *capture), uint64_t(want.packets))
                << (jit ? "JIT" : "interpreter") << " on " << capture->records().size() << " packets";
            EXPECT_EQ(filter->stats().drops.get(), capture->records().size() - uint64_t(want.packets));
        }
    }
}

std::string test_name_of(const testing::TestParamInfo<std::string>& info) {
    std::string n = info.param;
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(SharedCaptures, TcpdumpParity, testing::ValuesIn(test::shared_capture_names()), test_name_of);

TEST(TcpdumpParityCoverage, AtLeastTwentyExpressionsOnTwentyCaptures) {
    size_t readable = 0;
    for (const std::string& name : test::shared_capture_names())
        readable += load_if_readable(test::pcaps_dir() + "/" + name) != nullptr;
    EXPECT_GE(expressions().size(), 20u);
    EXPECT_GE(readable, 20u) << "fewer shared Ethernet captures load than expected";
}

// ---- behaviour -------------------------------------------------------------------------------

TEST(BpfFilterRegistration, IsAProcessorWithItsParametersDocumented) {
    const StageInfo* info = StageRegistry::instance().find("bpf_filter");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    ASSERT_NE(info->find_param("expr"), nullptr);
    EXPECT_TRUE(info->find_param("expr")->required);
    ASSERT_NE(info->find_param("invert"), nullptr);
    EXPECT_EQ(info->find_param("invert")->default_text, "false");
    ASSERT_NE(info->find_param("jit"), nullptr);
    EXPECT_EQ(info->find_param("jit")->default_text, "true");
    for (const ParamSpec& p : info->params) EXPECT_FALSE(p.help.empty()) << p.name;
}

TEST(BpfFilter, NonMatchingPacketsAreDroppedAsNoMatch) {
    const auto f = opened_filter("tcp dst port 80");
    EXPECT_TRUE(keeps(*f, mbuf_of(ipv4_tcp(80))));
    EXPECT_FALSE(keeps(*f, mbuf_of(ipv4_tcp(81))));
    ASSERT_EQ(f->drop_reasons(), std::vector<std::string>{"no_match"});
    EXPECT_EQ(f->stats().reason[0].get(), 1u);
    EXPECT_EQ(f->stats().drops.get(), 1u);
}

TEST(BpfFilter, InvertKeepsTheNonMatchingAndDropsTheMatchingAsMatched) {
    const auto f = opened_filter("tcp dst port 80", true, true);
    EXPECT_FALSE(keeps(*f, mbuf_of(ipv4_tcp(80))));
    EXPECT_TRUE(keeps(*f, mbuf_of(ipv4_tcp(81))));
    EXPECT_EQ(f->drop_reasons(), std::vector<std::string>{"matched"});
}

TEST(BpfFilter, KeptPacketsStayInOrderWithinABurst) {
    const auto f = opened_filter("tcp dst port 80");
    Burst b;
    for (uint16_t i = 0; i < kBurstMax; ++i)
        b.d[b.n++] = PacketDesc{mbuf_of(ipv4_tcp(i % 3 == 0 ? 80 : 81, i)), 0, 0, 0, 0};
    f->process(b);
    ASSERT_EQ(b.n, (kBurstMax + 2) / 3);
    for (uint16_t i = 0; i < b.n; ++i) {
        EXPECT_EQ(rte_pktmbuf_pkt_len(b.d[i].mbuf), 54u + 3 * i);
        rte_pktmbuf_free(b.d[i].mbuf);
    }
}

TEST(BpfFilter, AnEmptyExpressionKeepsEverything) {
    const auto f = opened_filter("");
    EXPECT_TRUE(keeps(*f, mbuf_of(ipv4_tcp(1))));
    EXPECT_TRUE(keeps(*f, mbuf_of(Bytes(20, 0xff))));
}

TEST(BpfFilter, UsesTheJitOnX86AndTheInterpreterWhenAskedAndBothAgree) {
#if defined(RTE_ARCH_X86_64) || defined(RTE_ARCH_ARM64)
    EXPECT_TRUE(opened_filter("tcp")->jitted());
#endif
    const auto interp = opened_filter("tcp port 80", false);
    EXPECT_FALSE(interp->jitted());
    EXPECT_TRUE(keeps(*interp, mbuf_of(ipv4_tcp(80))));
    EXPECT_FALSE(keeps(*interp, mbuf_of(ipv4_tcp(22))));
}

TEST(BpfFilter, AChainedFrameIsReadAcrossItsSegments) {
    // The TCP ports lie in the second segment, the payload word the third expression reads too.
    const Bytes frame = ipv4_tcp(80, 8);
    for (const bool jit : {true, false}) {
        SCOPED_TRACE(jit ? "JIT" : "interpreter");
        EXPECT_TRUE(keeps(*opened_filter("tcp dst port 80", jit), chain_of(frame, 20)));
        EXPECT_FALSE(keeps(*opened_filter("tcp dst port 81", jit), chain_of(frame, 20)));
        EXPECT_TRUE(keeps(*opened_filter("tcp[20:4] = 0xabababab", jit), chain_of(frame, 36)));
        EXPECT_TRUE(keeps(*opened_filter("greater 62", jit), chain_of(frame, 30)));
        EXPECT_FALSE(keeps(*opened_filter("greater 63", jit), chain_of(frame, 30)));
    }
}

TEST(BpfFilter, LenIsTheWireLengthNotTheCapturedBytes) {
    // 60 bytes captured of a 1514-byte frame: tcpdump's `greater 1000` keeps it.
    const Bytes frame = ipv4_tcp(80);
    for (const bool jit : {true, false}) {
        SCOPED_TRACE(jit ? "JIT" : "interpreter");
        const auto snapped = [&](uint32_t wire) {
            rte_mbuf* m = mbuf_of(frame);
            wire_length(m, wire_length_offset()) = wire;
            return m;
        };
        EXPECT_TRUE(keeps(*opened_filter("greater 1000", jit), snapped(1514)));
        EXPECT_FALSE(keeps(*opened_filter("greater 1000", jit), snapped(999)));
        EXPECT_FALSE(keeps(*opened_filter("less 100", jit), snapped(1514)));
        EXPECT_TRUE(keeps(*opened_filter("len = 1514", jit), snapped(1514)));
        EXPECT_TRUE(keeps(*opened_filter("tcp dst port 80 and greater 1000", jit), snapped(1514)));
    }
}

TEST(BpfFilter, ALoadPastTheEndOfAShortFrameIsNoMatchAndReadsNothingBeyondIt) {
    Bytes frame = ipv4_tcp(80);
    for (size_t len : {0u, 1u, 13u, 14u, 23u, 34u, 36u, 37u}) {
        SCOPED_TRACE("frame of " + std::to_string(len) + " bytes");
        const Bytes cut(frame.begin(), frame.begin() + len);
        for (const bool jit : {true, false}) {
            EXPECT_FALSE(keeps(*opened_filter("tcp dst port 80", jit), mbuf_of(cut)));
            EXPECT_EQ(keeps(*opened_filter("less 40", jit), mbuf_of(cut)), len <= 40);
        }
    }
}

TEST(BpfFilter, ABadExpressionIsRefusedAtExprWithLibpcapsMessage) {
    try {
        BpfFilter f(bpf_params({{"expr", "tcp prot 80"}}));
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().str(), "app.yaml:2:5");
        EXPECT_NE(e.message().find("bad filter expression 'tcp prot 80': "), std::string::npos) << e.what();
        EXPECT_NE(e.message().find("syntax error"), std::string::npos) << e.what();
    }
    try {
        BpfFilter f(bpf_params({{"expr", "ip broadcast"}}));
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_NE(e.message().find("netmask not known"), std::string::npos) << e.what();
    }
}

TEST(BpfFilter, LinuxSocketMetadataIsRefusedNamingTheConstruct) {
    // libpcap compiles these into loads of Linux socket-buffer fields, which a DPDK mbuf lacks.
    for (const auto& [expr, field] : std::vector<std::pair<std::string, std::string>>{
             {"inbound", "SKF_AD_PKTTYPE"}, {"tcp and outbound", "SKF_AD_PKTTYPE"}, {"ifindex 2", "SKF_AD_IFINDEX"}}) {
        try {
            BpfFilter f(bpf_params({{"expr", expr}}));
            FAIL() << expr << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(e.where().str(), "app.yaml:2:5");
            EXPECT_NE(e.message().find("cannot run on DPDK"), std::string::npos) << e.what();
            EXPECT_NE(e.message().find(field), std::string::npos) << e.what();
        }
    }
}

TEST(BpfFilter, ProtochainIsRefusedAsALoop) {
    try {
        BpfFilter f(bpf_params({{"expr", "ip6 protochain 6"}}));
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().str(), "app.yaml:2:5");
        EXPECT_NE(e.message().find("jumps backwards"), std::string::npos) << e.what();
        EXPECT_NE(e.message().find("protochain"), std::string::npos) << e.what();
    }
}

TEST(BpfFilter, VlanTestsTheTagInTheFrameAsTcpdumpDoesOnAFile) {
    Bytes tagged = ipv4_tcp(80);
    const Bytes tag = {0x81, 0x00, 0x00, 0x64};  // VLAN 100
    tagged.insert(tagged.begin() + 12, tag.begin(), tag.end());
    EXPECT_TRUE(keeps(*opened_filter("vlan"), mbuf_of(tagged)));
    EXPECT_TRUE(keeps(*opened_filter("vlan 100 and tcp dst port 80"), mbuf_of(tagged)));
    EXPECT_FALSE(keeps(*opened_filter("vlan 101"), mbuf_of(tagged)));
    EXPECT_FALSE(keeps(*opened_filter("vlan"), mbuf_of(ipv4_tcp(80))));
}

TEST(BpfFilter, IndirectLoadsOfEverySizeIndexFromTheIpHeaderLength) {
    // `tcp[N]` loads relative to the IP header length (classic BPF's X register); DPDK's
    // converter mistakes the index register for byte and word loads unless the stage fixes it.
    Bytes with_options = ipv4_tcp(80, 8);
    with_options[14] = 0x46;  // IHL 6: four bytes of options before TCP
    const Bytes nops = {1, 1, 1, 0};
    with_options.insert(with_options.begin() + 34, nops.begin(), nops.end());
    with_options[17] = 52;  // total length
    for (const bool jit : {true, false}) {
        SCOPED_TRACE(jit ? "JIT" : "interpreter");
        for (const Bytes& frame : {ipv4_tcp(80, 8), with_options}) {
            fprintf(stderr, "frame %zu jit %d\n", frame.size(), jit);
            EXPECT_TRUE(keeps(*opened_filter("tcp[20:1] = 0xab", jit), mbuf_of(frame)));
            fprintf(stderr, "a\n");
            EXPECT_TRUE(keeps(*opened_filter("tcp[20:2] = 0xabab", jit), mbuf_of(frame)));
            EXPECT_TRUE(keeps(*opened_filter("tcp[20:4] = 0xabababab", jit), mbuf_of(frame)));
            fprintf(stderr, "c\n");
            EXPECT_TRUE(keeps(*opened_filter("tcp[tcpflags] & tcp-syn != 0", jit), mbuf_of(frame)));
            fprintf(stderr, "d\n");
            EXPECT_FALSE(keeps(*opened_filter("tcp[tcpflags] & tcp-ack != 0", jit), mbuf_of(frame)));
        }
    }
}

TEST(BpfFilter, BitTestsAgainstSmallConstantsGiveTheRightVerdictWithTheJit) {
    // `jset` against a one-byte constant is what DPDK's x86 JIT encodes wrongly; the stage
    // rewrites it. The frame's TOS byte is 0 and its TCP flags are SYN only.
    const Bytes frame = ipv4_tcp(80);
    for (const bool jit : {true, false}) {
        SCOPED_TRACE(jit ? "JIT" : "interpreter");
        EXPECT_FALSE(keeps(*opened_filter("ip[1] & 2 != 0", jit), mbuf_of(frame)));
        EXPECT_TRUE(keeps(*opened_filter("ip[1] & 2 = 0", jit), mbuf_of(frame)));
        EXPECT_TRUE(keeps(*opened_filter("tcp[13] & 2 != 0", jit), mbuf_of(frame)));
        EXPECT_FALSE(keeps(*opened_filter("tcp[13] & 0x7d != 0", jit), mbuf_of(frame)));
        EXPECT_TRUE(keeps(*opened_filter("(tcp[13] & 1 != 0) or (tcp[13] & 2 != 0) or (ip[1] & 4 != 0)", jit),
                          mbuf_of(frame)));
        EXPECT_FALSE(keeps(*opened_filter("ip[6:2] & 0x1fff != 0", jit), mbuf_of(frame)));
    }
}

TEST(BpfFilter, ReopeningAfterCloseFiltersAgain) {
    auto f = opened_filter("tcp");
    f->close();
    StageEnv env;
    f->open(env);
    EXPECT_TRUE(keeps(*f, mbuf_of(ipv4_tcp(80))));
    EXPECT_EQ(f->classic_instructions() > 0, true);
}

}  // namespace
}  // namespace tp
