// The `pcap` source: what a user relies on when replaying a capture.
//
// Every shared capture is checked against tcpdump, the reference reader: where tcpdump reads an
// Ethernet capture the source replays the same frames, byte for byte; a Linux cooked, raw IP or
// loopback capture replays the same packets behind a synthetic Ethernet header that `parse`
// reads; where tcpdump fails the source refuses with a one-line message naming the file (and
// the record at fault).
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "descriptors/wire_length.hpp"
#include "framework/stage/registry.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_stream.hpp"
#include "stages/parse.hpp"
#include "stages/pcap_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/stage_params.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Given = test::Given;

// ---- helpers -------------------------------------------------------------------------------

// Parameters as a config gives them: the node on line 1 of app.yaml, each given key on its own
// line after it, in order.
ParamValues pcap_params(const Given& given) { return test::stage_params("pcap", given); }

MbufPool app_pool(uint32_t mbufs = 8191, uint16_t data_room = 2048) {
    static std::atomic<int> serial{0};
    MbufPoolSpec spec;
    spec.name = "src_test_" + std::to_string(serial++);
    spec.mbufs = mbufs;
    spec.data_room = data_room;
    return MbufPool(spec);
}

std::string frame_bytes(const rte_mbuf* m) {
    std::string s(rte_pktmbuf_pkt_len(m), '\0');
    const void* p = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), s.data());
    if (p != s.data()) std::memcpy(s.data(), p, s.size());
    return s;
}

struct Replay {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t idle = 0;
    std::vector<std::string> frames;
    double seconds = 0;
};

// Runs the source to Done, freeing every packet; gives up after `limit` (a hung replay fails).
Replay drain(PcapSource& src, bool keep_frames = false, std::chrono::seconds limit = std::chrono::seconds(60)) {
    Replay r;
    Burst b;
    const auto t0 = Clock::now();
    for (;;) {
        b.n = 0;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        if (st == SourceStatus::Idle) {
            ++r.idle;
            if (Clock::now() - t0 > limit) {
                ADD_FAILURE() << "replay still idle after " << limit.count() << " s";
                break;
            }
            continue;
        }
        EXPECT_GT(b.n, 0);
        EXPECT_LE(b.n, kBurstMax);
        for (const PacketDesc& d : b) {
            ++r.packets;
            r.bytes += frame_length(d);
            if (keep_frames) r.frames.push_back(frame_bytes(d.mbuf));
            rte_pktmbuf_free(d.mbuf);
        }
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
}

std::string pcap_path(const std::string& name) { return test::pcaps_dir() + "/" + name; }

struct CaptureContents {
    std::vector<std::string> frames;
    std::vector<double> seconds;  // timestamps
    uint64_t bytes = 0;
};

// The frames libpcap reads from `path` (used on files tcpdump wrote and on valid captures).
CaptureContents read_with_libpcap(const std::string& path) {
    CaptureContents c;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (p == nullptr) return c;
    pcap_pkthdr* h;
    const u_char* data;
    while (pcap_next_ex(p, &h, &data) == 1) {
        c.frames.emplace_back(reinterpret_cast<const char*>(data), h->caplen);
        c.seconds.push_back(double(h->ts.tv_sec) + double(h->ts.tv_usec) * 1e-9);
        c.bytes += h->caplen;
    }
    pcap_close(p);
    return c;
}

struct Command {
    int exit_code = -1;
    std::string out;
};

Command run(const std::string& cmd) {
    Command c;
    FILE* f = popen(cmd.c_str(), "r");
    if (f == nullptr) return c;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) c.out.append(buf, n);
    const int status = pclose(f);
    c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return c;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// What tcpdump makes of a capture: exit code, stderr, the link type it announced, the packet
// count (--count) and the frames it would write (-w, read back), whose sizes give the bytes.
struct TcpdumpVerdict {
    int exit_code = -1;
    std::string stderr_text;
    std::string link_type;  // empty when tcpdump rejected the file header
    uint64_t packets = 0;
    uint64_t bytes = 0;
    std::vector<std::string> frames;

    // tcpdump's own reason for failing, without its "tcpdump: " and "pcap_loop: " prefixes.
    std::string reason() const {
        std::string r = stderr_text;
        const auto at = r.rfind("tcpdump: ");
        if (at != std::string::npos) r = r.substr(at + 9);
        if (r.rfind("pcap_loop: ", 0) == 0) r = r.substr(11);
        while (!r.empty() && r.back() == '\n') r.pop_back();
        return r;
    }
};

TcpdumpVerdict tcpdump_reads(const std::string& path, const std::string& scratch_dir) {
    TcpdumpVerdict v;
    const std::string err = scratch_dir + "/tcpdump.err";
    const std::string out = scratch_dir + "/tcpdump.pcap";
    const Command count = run("tcpdump --count -r '" + path + "' 2>'" + err + "'");
    v.exit_code = count.exit_code;
    v.packets = std::strtoull(count.out.c_str(), nullptr, 10);
    v.stderr_text = read_file(err);
    const auto lt = v.stderr_text.find("link-type ");
    if (lt != std::string::npos) {
        const auto end = v.stderr_text.find(' ', lt + 10);
        v.link_type = v.stderr_text.substr(lt + 10, end - (lt + 10));
    }
    fs::remove(out);
    run("tcpdump -r '" + path + "' -w '" + out + "' 2>/dev/null");
    if (fs::exists(out)) {
        // A pcap file is a 24-byte header and a 16-byte header per record before its bytes.
        const uint64_t size = fs::file_size(out);
        v.bytes = size >= 24 + 16 * v.packets ? size - 24 - 16 * v.packets : 0;
        v.frames = read_with_libpcap(out).frames;
    }
    return v;
}

// Classic pcap files written byte by byte, so a test can break them exactly where it wants.
struct RawRecord {
    uint32_t sec = 0;
    uint32_t frac = 0;  // microseconds, or nanoseconds in a nano file
    std::string data;
    int64_t caplen = -1;  // header field; -1 = data.size()
    uint32_t wire = 0;    // original length; 0 = data.size()
};

void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put16(std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }

std::string pcap_bytes(const std::vector<RawRecord>& records, uint32_t linktype = 1, bool nano = false,
                       uint32_t snaplen = 65535) {
    std::string s;
    put32(s, nano ? 0xa1b23c4d : 0xa1b2c3d4);
    put16(s, 2);
    put16(s, 4);
    put32(s, 0);
    put32(s, 0);
    put32(s, snaplen);
    put32(s, linktype);
    for (const RawRecord& r : records) {
        put32(s, r.sec);
        put32(s, r.frac);
        put32(s, r.caplen < 0 ? uint32_t(r.data.size()) : uint32_t(r.caplen));
        put32(s, r.wire != 0 ? r.wire : uint32_t(r.data.size()));
        s += r.data;
    }
    return s;
}

std::string frame(size_t len, char fill) { return std::string(len, fill); }

// Every event a stage counted, by name.
std::map<std::string, uint64_t> events_of(const Stage& st) {
    std::map<std::string, uint64_t> m;
    for (size_t i = 0; i < st.events().size(); ++i) m[st.events()[i]] = st.stats().event[i].get();
    return m;
}

// A whole replay and what the source reported about the records it did not replay.
struct Outcome {
    Replay replay;
    std::map<std::string, uint64_t> events;
    uint64_t skipped = 0;
    uint64_t errors = 0;
    std::vector<uint32_t> wire;  // each replayed packet's wire length
};

// ---- fixture -------------------------------------------------------------------------------

class PcapSourceTest : public testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/tp_pcap_source_XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& bytes) {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }

    // Opens a source on `given` and expects it to refuse: at open() (a preloaded capture, or a
    // stream's header), or from produce() once a stream reaches the damaged record, having
    // replayed every record before it (their count in `replayed`). Returns the error.
    LocatedError refusal(const Given& given, uint64_t* replayed = nullptr) {
        PcapSource src(pcap_params(given));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "src", 0};
        uint64_t packets = 0;
        try {
            src.open(env);
            Burst b;
            for (SourceStatus st = SourceStatus::Idle; st != SourceStatus::Done;) {
                b.n = 0;
                st = src.produce(b);
                packets += b.n;
                for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
            }
        } catch (const LocatedError& e) {
            if (replayed != nullptr) *replayed = packets;
            src.close();
            EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
            EXPECT_EQ(pool.available(), pool.capacity());
            return e;
        }
        ADD_FAILURE() << "the source accepted " << given.front().second;
        return LocatedError(Location{}, "accepted");
    }

    // Replays `given` to the end (frames kept) and collects the source's events.
    Outcome replay_whole(const Given& given) {
        Outcome o;
        PcapSource src(pcap_params(given));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "src", 0};
        src.open(env);
        const int wire = wire_length_offset();
        Burst b;
        for (;;) {
            b.n = 0;
            const SourceStatus st = src.produce(b);
            if (st == SourceStatus::Done) break;
            for (const PacketDesc& d : b) {
                ++o.replay.packets;
                o.replay.bytes += frame_length(d);
                o.replay.frames.push_back(frame_bytes(d.mbuf));
                o.wire.push_back(wire_length(d.mbuf, wire));
                rte_pktmbuf_free(d.mbuf);
            }
        }
        o.events = events_of(src);
        o.skipped = o.events.at("capture.skipped_records");
        o.errors = o.events.at("capture.errors");
        src.close();
        EXPECT_EQ(pool.available(), pool.capacity());
        EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
        return o;
    }

    std::string dir_;
};

// ---- registration and descriptors ----------------------------------------------------------

TEST(PcapSourceRegistration, IsASourceNamedPcapWithItsParameters) {
    const StageInfo* info = StageRegistry::instance().find("pcap");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Source);
    ASSERT_NE(info->find_param("file"), nullptr);
    EXPECT_TRUE(info->find_param("file")->required);
    EXPECT_EQ(info->find_param("loop")->default_text, "1");
    for (const char* rate : {"pps", "mbps", "speed"}) {
        ASSERT_NE(info->find_param(rate), nullptr) << rate;
        EXPECT_EQ(info->find_param(rate)->type, ParamType::Double) << rate;
    }
    auto stage = info->create(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}}));
    EXPECT_EQ(stage->kind(), StageKind::Source);
}

TEST_F(PcapSourceTest, FillsFullBurstsOfDescriptorsStampedWithThePort) {
    PcapSource src(pcap_params({{"file", pcap_path("pcpp__DnsPackets.pcap")}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 7};
    src.open(env);
    EXPECT_EQ(src.template_packets(), 464u);

    Burst b;
    ASSERT_EQ(src.produce(b), SourceStatus::Produced);
    EXPECT_EQ(b.n, kBurstMax);
    for (const PacketDesc& d : b) {
        EXPECT_EQ(d.port, 7);
        EXPECT_EQ(d.mbuf->port, 7);
        EXPECT_EQ(d.flow_hash, 0u);
        EXPECT_EQ(d.type, 0);
        EXPECT_EQ(d.length, rte_pktmbuf_pkt_len(d.mbuf));
        rte_pktmbuf_free(d.mbuf);
    }
    drain(src);
    src.close();
}

TEST_F(PcapSourceTest, AFrameLongerThanAnAppMbufLeavesAsAChainWithSaturatedLength) {
    const std::string path = pcap_path("tcpdump__bigtcp-ipv6-hbh.pcap");
    PcapSource src(pcap_params({{"file", path}}));
    MbufPool pool = app_pool(511, 2048);
    StageEnv env{&pool, "src", 0};
    src.open(env);

    Burst b;
    ASSERT_EQ(src.produce(b), SourceStatus::Produced);
    ASSERT_EQ(b.n, 1);
    const PacketDesc& d = b.d[0];
    EXPECT_EQ(rte_pktmbuf_pkt_len(d.mbuf), 80094u);
    EXPECT_EQ(d.mbuf->nb_segs, (80094 + 2047) / 2048);
    EXPECT_EQ(d.length, PacketDesc::kLengthSaturated);
    EXPECT_EQ(frame_length(d), 80094u);
    EXPECT_EQ(frame_bytes(d.mbuf), read_with_libpcap(path).frames.at(0));
    rte_pktmbuf_free(d.mbuf);
    EXPECT_EQ(src.produce(b), SourceStatus::Done);
    src.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PcapSourceTest, DownstreamMayEditPacketsWithoutChangingTheReplay) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"loop", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    Burst b;
    ASSERT_EQ(src.produce(b), SourceStatus::Produced);
    ASSERT_EQ(b.n, 4);  // two packets, twice
    const std::string original = frame_bytes(b.d[0].mbuf);
    std::memset(rte_pktmbuf_mtod(b.d[0].mbuf, void*), 0xee, 16);
    EXPECT_EQ(frame_bytes(b.d[2].mbuf), original);
    for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    src.close();
}

// ---- every shared capture against tcpdump --------------------------------------------------

std::vector<std::string> shared_captures() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(test::pcaps_dir(), ec)) {
        const std::string ext = e.path().extension().string();
        if (ext == ".pcap" || ext == ".pcapng") names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Bytes of link header a non-Ethernet capture's frames start with, by tcpdump's link-type
// name; -1 for Ethernet and for link types whose headers vary from frame to frame.
int link_header_bytes(const std::string& link_type) {
    if (link_type == "LINUX_SLL") return 16;
    if (link_type == "LINUX_SLL2") return 20;
    if (link_type == "RAW" || link_type == "IPV4" || link_type == "IPV6") return 0;
    if (link_type == "NULL" || link_type == "LOOP") return 4;
    return -1;
}

// A normalised capture replays tcpdump's packets, each its link header replaced by 14 bytes of
// Ethernet, and `parse` finds IPv4 or IPv6 exactly where the packet's IP version nibble says.
void expect_normalised_replay(const std::string& path, const std::string& preload, const TcpdumpVerdict& tcpdump,
                              int link_header) {
    PcapSource src(pcap_params({{"file", path}, {"preload", preload}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    EXPECT_FALSE(src.truncated());
    if (!src.streaming()) EXPECT_EQ(src.template_packets(), tcpdump.packets);
    const Replay r = drain(src, true);
    ASSERT_EQ(r.packets, tcpdump.packets);
    ASSERT_EQ(r.frames.size(), tcpdump.frames.size());
    uint64_t ip = 0;
    for (size_t i = 0; i < r.frames.size(); ++i) {
        SCOPED_TRACE("record " + std::to_string(i + 1));
        const std::string& original = tcpdump.frames[i];
        ASSERT_GE(original.size(), size_t(link_header));
        const std::string packet = original.substr(link_header);
        ASSERT_EQ(r.frames[i].size(), 14 + packet.size());
        EXPECT_EQ(r.frames[i].substr(14), packet);
        EXPECT_EQ(r.frames[i].substr(0, 6), std::string(6, '\0')) << "destination MAC";
        const auto* bytes = reinterpret_cast<const uint8_t*>(r.frames[i].data());
        const ParseResult parsed = parse_headers(bytes, static_cast<uint32_t>(r.frames[i].size()));
        const int version = packet.empty() ? 0 : static_cast<uint8_t>(packet[0]) >> 4;
        const uint16_t ether_type = static_cast<uint16_t>(bytes[12] << 8 | bytes[13]);
        if (ether_type == 0x0800 || ether_type == 0x86dd) {
            ++ip;
            EXPECT_EQ(version, ether_type == 0x0800 ? 4 : 6);
            EXPECT_EQ(parsed.type & ptype::kL3Mask, version == 4 ? ptype::kL3Ipv4 : ptype::kL3Ipv6);
        } else {
            EXPECT_EQ(parsed.type & ptype::kL3Mask, ptype::kL3Other);
        }
    }
    EXPECT_GT(ip, 0u) << "no packet was seen as IP";
    src.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

// Each shared capture, preloaded and streamed: both replay what tcpdump reads, and refuse
// alike, a stream from the damaged record on.
class SharedCapture : public PcapSourceTest,
                      public testing::WithParamInterface<std::tuple<std::string, std::string>> {
protected:
    const std::string& name() const { return std::get<0>(GetParam()); }
    const std::string& preload() const { return std::get<1>(GetParam()); }
    bool streamed() const { return preload() == "false"; }
};

TEST(SharedCaptures, AreAllPresent) { EXPECT_GE(shared_captures().size(), 40u); }

// libpcap's words when a pcapng file's interfaces differ in link type or snapshot length:
// tcpdump stops there, tshark (and the source) read on.
bool libpcap_stops_at_a_new_interface(const TcpdumpVerdict& t) {
    return t.stderr_text.find("different from the type of the first interface") != std::string::npos ||
           t.stderr_text.find("different from the snapshot length of the first interface") != std::string::npos;
}

// tshark's count of the frames of `path` matching display filter `filter` ("" = all).
uint64_t tshark_count(const std::string& path, const std::string& filter) {
    const Command c = run("tshark -n -r '" + path + "'" + (filter.empty() ? "" : " -Y '" + filter + "'") +
                          " -T fields -e frame.number 2>/dev/null | wc -l");
    return std::strtoull(c.out.c_str(), nullptr, 10);
}

// Frames by what `parse` finds in them: IPv4, IPv6, MPLS (EtherType 0x8847) or other.
struct FrameKinds {
    uint64_t ipv4 = 0, ipv6 = 0, mpls = 0, other = 0;
};
FrameKinds kinds_of(const std::vector<std::string>& frames) {
    FrameKinds k;
    for (const std::string& f : frames) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(f.data());
        const ParseResult parsed = parse_headers(bytes, static_cast<uint32_t>(f.size()));
        const uint32_t l3 = parsed.type & ptype::kL3Mask;
        if (l3 == ptype::kL3Ipv4) ++k.ipv4;
        else if (l3 == ptype::kL3Ipv6) ++k.ipv6;
        else if (f.size() >= 14 && bytes[12] == 0x88 && bytes[13] == 0x47) ++k.mpls;
        else ++k.other;
    }
    return k;
}

// Every shared capture replays the packets tcpdump counts (tshark's count where tcpdump stops
// at an interface libpcap cannot take): replayed + skipped = that count. Where tcpdump fails on
// a damaged record the records before it replay and `capture.errors` says so, and with
// `strict` the file is refused with tcpdump's reason; where libpcap rejects the file header
// the source refuses it with the same reason.
TEST_P(SharedCapture, ReplaysTheRecordsTcpdumpOrTsharkCountsAndAccountsForTheRest) {
    const std::string path = pcap_path(name());
    const TcpdumpVerdict tcpdump = tcpdump_reads(path, dir_);
    SCOPED_TRACE("tcpdump exit " + std::to_string(tcpdump.exit_code) + ", " +
                 std::to_string(tcpdump.packets) + " packets, stderr: " + tcpdump.stderr_text);

    if (tcpdump.link_type.empty()) {
        // libpcap rejected the file header (and so does the pcapng reader): same reason.
        ASSERT_NE(tcpdump.exit_code, 0);
        const LocatedError e = refusal({{"file", path}, {"preload", preload()}});
        EXPECT_EQ(std::string(e.what()), path + ": " + tcpdump.reason());
        return;
    }
    const bool new_interface = libpcap_stops_at_a_new_interface(tcpdump);
    const bool cut_short = tcpdump.stderr_text.find("truncated dump file") != std::string::npos;
    const bool damaged = tcpdump.exit_code != 0 && !cut_short && !new_interface;
    const uint64_t reference = new_interface ? tshark_count(path, "") : tcpdump.packets;

    const Outcome o = replay_whole({{"file", path}, {"preload", preload()}});
    EXPECT_EQ(o.replay.packets + o.skipped, reference) << "replayed " << o.replay.packets << ", skipped " << o.skipped;
    EXPECT_EQ(o.errors, damaged ? 1u : 0u);
    EXPECT_EQ(o.events.at("truncated_file"), cut_short ? 1u : 0u);
    if (damaged) {
        // tshark may read past such a record, guessing; tcpdump's verdict is the strict one.
        uint64_t replayed = 0;
        const LocatedError e = refusal({{"file", path}, {"preload", preload()}, {"strict", "true"}}, &replayed);
        EXPECT_EQ(std::string(e.what()), path + ": record " + std::to_string(tcpdump.packets + 1) + ": " + tcpdump.reason());
    }

    if (tcpdump.link_type == "EN10MB" && !new_interface) {
        // Byte for byte what tcpdump writes, less the records that hold no bytes.
        std::vector<std::string> want;
        for (const std::string& f : tcpdump.frames)
            if (!f.empty()) want.push_back(f);
        EXPECT_EQ(o.skipped, tcpdump.frames.size() - want.size());
        EXPECT_EQ(o.events.at("capture.skipped.empty_record"), o.skipped);
        EXPECT_TRUE(o.replay.frames == want) << "frames differ from what tcpdump writes";
        return;
    }
    if (const int header = link_header_bytes(tcpdump.link_type); header >= 0) {
        expect_normalised_replay(path, preload(), tcpdump, header);
        return;
    }
    // PPP, 802.11 and pcapng with several link types: each replayed frame is what tshark
    // dissects it as, IPv4, IPv6 or MPLS, behind an Ethernet header `parse` reads.
    if (cut_short) return;  // tshark fails on the cut; the counts above are the check
    const FrameKinds k = kinds_of(o.replay.frames);
    EXPECT_EQ(k.mpls, tshark_count(path, "mpls"));
    EXPECT_EQ(k.ipv4, tshark_count(path, "ip and not mpls and not ipv6"));
    EXPECT_EQ(k.ipv6, tshark_count(path, "ipv6 and not mpls and not ip"));
    EXPECT_EQ(k.ipv4 + k.ipv6 + k.mpls + k.other, o.replay.packets);
}

std::string test_name_of(const testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
    std::string n = std::get<0>(info.param);
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n + (std::get<1>(info.param) == "false" ? "_streamed" : "_preloaded");
}

INSTANTIATE_TEST_SUITE_P(Pcaps, SharedCapture,
                         testing::Combine(testing::ValuesIn(shared_captures()), testing::Values("true", "false")),
                         test_name_of);

// ---- loop and pacing -----------------------------------------------------------------------

TEST_F(PcapSourceTest, LoopReplaysTheCaptureThatManyTimes) {
    PcapSource src(pcap_params({{"file", pcap_path("pcpp__DnsPackets.pcap")}, {"loop", "3"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    EXPECT_EQ(r.packets, 3 * src.template_packets());
    EXPECT_EQ(r.bytes, 3 * src.template_bytes());
    src.close();
}

TEST_F(PcapSourceTest, LoopZeroReplaysUntilStopped) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"loop", "0"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    uint64_t packets = 0;
    Burst b;
    for (int i = 0; i < 1000; ++i) {
        b.n = 0;
        ASSERT_EQ(src.produce(b), SourceStatus::Produced);
        packets += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    EXPECT_EQ(packets, 1000u * kBurstMax);
    src.close();
    EXPECT_EQ(src.produce(b), SourceStatus::Done) << "a closed source emits nothing";
}

TEST_F(PcapSourceTest, AnEmptyCaptureReplaysNothingEvenWhenLoopingForever) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__empty.pcap")}, {"loop", "0"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    EXPECT_EQ(src.template_packets(), 0u);
    Burst b;
    EXPECT_EQ(src.produce(b), SourceStatus::Done);
    EXPECT_EQ(b.n, 0);
    src.close();
}

// Pacing is checked functionally: the replay may not finish before the last packet is due,
// and must finish within a generous margin after (the test machine is shared).
void expect_paced(const Replay& r, double due_seconds) {
    EXPECT_GE(r.seconds, due_seconds * 0.98) << "the replay ran ahead of its pace";
    EXPECT_LE(r.seconds, due_seconds * 3 + 0.2) << "the replay lagged far behind its pace";
    EXPECT_GT(r.idle, 0u);
}

TEST_F(PcapSourceTest, PpsPacesThePacketRate) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"loop", "200"}, {"pps", "2000"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    ASSERT_EQ(r.packets, 400u);
    expect_paced(r, 399 / 2000.0);  // packet i is due at i / pps
    src.close();
}

TEST_F(PcapSourceTest, MbpsPacesTheFrameBitRate) {
    const std::string path = pcap_path("pcpp__DnsPackets.pcap");
    PcapSource src(pcap_params({{"file", path}, {"mbps", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    const CaptureContents c = read_with_libpcap(path);
    ASSERT_EQ(r.packets, c.frames.size());
    // A packet is due once the bits before it have gone out at the rate.
    expect_paced(r, double(c.bytes - c.frames.back().size()) * 8 / 2e6);
    src.close();
}

TEST_F(PcapSourceTest, SpeedFollowsTheCaptureTimestamps) {
    const std::string path = pcap_path("suricata__nfs3-01__input.pcap");  // 0.47 s recorded
    PcapSource src(pcap_params({{"file", path}, {"speed", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    const CaptureContents c = read_with_libpcap(path);
    ASSERT_EQ(r.packets, c.frames.size());
    expect_paced(r, (c.seconds.back() - c.seconds.front()) / 2);
    src.close();
}

TEST_F(PcapSourceTest, SpeedReplaysBackwardAndInvalidTimestampsAsZeroGaps) {
    // 10.0 s, then 3 s earlier, then a fraction of 3e9 ns (not a time), then 10.1 s: the only
    // gap honoured is 0.1 s. Read literally these would wait years or underflow.
    const std::string path = write("jumps.pcap", pcap_bytes({{10, 0, frame(60, 'a')},
                                                             {7, 0, frame(60, 'b')},
                                                             {4000000000u, 3000000000u, frame(60, 'c')},
                                                             {10, 100000000, frame(60, 'd')}},
                                                            1, true));
    PcapSource src(pcap_params({{"file", path}, {"speed", "1"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src, false, std::chrono::seconds(5));
    EXPECT_EQ(r.packets, 4u);
    EXPECT_GE(r.seconds, 0.098);
    EXPECT_LT(r.seconds, 1.0);
    src.close();
}

TEST_F(PcapSourceTest, TwoPacingParametersAreRefusedAtTheSecond) {
    const std::string path = pcap_path("tcpdump__802.1ad_QinQ.pcap");
    try {
        PcapSource src(pcap_params({{"file", path}, {"pps", "1000"}, {"mbps", "10"}}));
        FAIL() << "pps and mbps together were accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 4) << "mbps, written after pps";
        EXPECT_NE(e.message().find("'mbps'"), std::string::npos) << e.what();
        EXPECT_NE(e.message().find("'pps'"), std::string::npos) << e.what();
    }
    try {
        PcapSource src(pcap_params({{"file", path}, {"speed", "1"}, {"pps", "10"}}));
        FAIL() << "speed and pps together were accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 4) << "pps, written after speed";
        EXPECT_NE(e.message().find("'pps'"), std::string::npos) << e.what();
    }
}

TEST_F(PcapSourceTest, ANegativeRateIsRefusedAtItsParameter) {
    try {
        PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"speed", "-2"}}));
        FAIL() << "a negative speed was accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 3);
    }
}

// ---- pools ---------------------------------------------------------------------------------

TEST_F(PcapSourceTest, BothPoolsAreFullAgainAfterReplayAndClose) {
    PcapSource src(pcap_params({{"file", pcap_path("pcpp__example.pcap")}, {"loop", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    ASSERT_GT(src.template_pool_capacity(), 0u);
    EXPECT_EQ(src.template_pool_available(), 0u) << "every template mbuf holds part of a frame";
    drain(src);
    EXPECT_EQ(pool.available(), pool.capacity());
    src.close();
    EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
}

TEST_F(PcapSourceTest, AnExhaustedAppPoolMakesTheSourceWaitButNeverLoseAPacket) {
    const std::string path = pcap_path("pcpp__DnsPackets.pcap");
    PcapSource src(pcap_params({{"file", path}}));
    MbufPool pool = app_pool(63);
    StageEnv env{&pool, "src", 0};
    src.open(env);

    std::vector<std::string> seen;
    std::vector<rte_mbuf*> in_flight;
    uint64_t idle = 0;
    Burst b;
    for (;;) {
        b.n = 0;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        if (st == SourceStatus::Idle) {
            // Downstream finally frees what it holds.
            ++idle;
            ASSERT_FALSE(in_flight.empty()) << "idle with nothing in flight";
            for (rte_mbuf* m : in_flight) rte_pktmbuf_free(m);
            in_flight.clear();
            continue;
        }
        for (const PacketDesc& d : b) {
            seen.push_back(frame_bytes(d.mbuf));
            in_flight.push_back(d.mbuf);
        }
    }
    for (rte_mbuf* m : in_flight) rte_pktmbuf_free(m);
    EXPECT_GT(idle, 0u);
    EXPECT_TRUE(seen == read_with_libpcap(path).frames) << "packets were lost or reordered";
    EXPECT_EQ(pool.available(), pool.capacity());
    src.close();
}

TEST_F(PcapSourceTest, TheMemoryACaptureNeedsIsKnownBeforeLoadingIt) {
    const Location cli{"<command line>"};
    EXPECT_EQ(CaptureFile::memory_needed(pcap_path("tcpdump__empty.pcap"), cli), 0u);
    const std::string path = pcap_path("pcpp__example.pcap");
    const uint64_t needed = CaptureFile::memory_needed(path, cli);
    CaptureFile loaded(path, cli);
    MbufPoolSpec spec;
    spec.mbufs = loaded.pool_capacity();
    spec.cache = 0;
    spec.data_room = loaded.segment_room();
    EXPECT_EQ(needed, MbufPool::footprint(spec));
    EXPECT_GT(needed, loaded.bytes());
    // A damaged record ends the capture: what comes before it is what memory is needed for.
    EXPECT_GT(CaptureFile::memory_needed(pcap_path("suricata__fuzz.pcap"), cli), 0u);
    EXPECT_THROW(CaptureFile::memory_needed(pcap_path("libpcap__pcap-invalid-version-1.pcap"), cli), LocatedError);
}

// ---- bad input -----------------------------------------------------------------------------

TEST_F(PcapSourceTest, AMissingFileIsRefusedWhereTheUserNamedIt) {
    const std::string path = dir_ + "/absent.pcap";
    const LocatedError e = refusal({{"file", path}});
    EXPECT_EQ(e.where().file, "app.yaml");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.message(), "cannot open capture '" + path + "': No such file or directory");
}

TEST_F(PcapSourceTest, AnEmptyFileIsRefused) {
    const std::string path = write("empty.pcap", "");
    EXPECT_EQ(std::string(refusal({{"file", path}}).what()),
              path + ": empty file (0 bytes), not a pcap or pcapng capture");
}

TEST_F(PcapSourceTest, TenRandomBytesAreRefusedAsUnknownFormat) {
    const std::string path = write("noise.pcap", std::string("\x93\x1f\x04\xc8\x77\x02\xe1\x5a\x0b\x66", 10));
    EXPECT_EQ(std::string(refusal({{"file", path}}).what()), path + ": unknown file format");
}

TEST_F(PcapSourceTest, ATruncatedGlobalHeaderIsRefused) {
    const std::string path = write("short-header.pcap", pcap_bytes({}).substr(0, 12));
    const std::string what = refusal({{"file", path}}).what();
    EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
    EXPECT_NE(what.find("truncated"), std::string::npos) << what;
    EXPECT_EQ(what.find("record"), std::string::npos) << what;
}

TEST_F(PcapSourceTest, AnUnsupportedVersionIsRefused) {
    std::string bytes = pcap_bytes({{1, 0, frame(60, 'a')}});
    bytes[4] = 1;  // version 1.4
    const std::string path = write("v1.pcap", bytes);
    EXPECT_EQ(std::string(refusal({{"file", path}}).what()), path + ": archaic pcap savefile format");
}

TEST_F(PcapSourceTest, AnUnsupportedLinkTypeIsRefusedByName) {
    const std::string path = write("atm.pcap", pcap_bytes({{1, 0, frame(60, 'a')}}, 11));
    EXPECT_EQ(std::string(refusal({{"file", path}}).what()),
              path + ": link type ATM_RFC1483 (11) is not supported (supported: EN10MB, "
                     "LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6, NULL, LOOP, PPP, IEEE802_11, IEEE802_11_RADIO, PPI)");
}

// The frames a crafted capture of `linktype` replays as.
std::vector<std::string> replayed_frames(const std::string& path) {
    PcapSource src(pcap_params({{"file", path}}));
    MbufPool pool = app_pool(511);
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src, true);
    src.close();
    return r.frames;
}

std::string ether_header(const std::string& src_mac, uint16_t ether_type) {
    return std::string(6, '\0') + src_mac + char(ether_type >> 8) + char(ether_type & 0xff);
}

const std::string kIpv4Packet = std::string("\x45\x00\x00\x14", 4) + std::string(16, '\x01');
const std::string kIpv6Packet = std::string("\x60\x00\x00\x00\x00\x00\x3b\x40", 8) + std::string(32, '\x02');

TEST_F(PcapSourceTest, LinuxCookedHeadersBecomeEthernetWithTheirProtocolAndAddress) {
    const std::string mac = "\x02\x11\x22\x33\x44\x55";
    // SLL: packet type 0, ARPHRD 1, address length 6, address padded to 8, protocol.
    const std::string sll = std::string("\x00\x00\x00\x01\x00\x06", 6) + mac + std::string(2, '\0');
    const std::string llc = std::string("\xaa\xaa\x03") + "abc";  // 802.2 LLC/SNAP start
    const std::string sll_llc = sll + std::string("\x00\x04", 2) + llc;
    const std::string path = write("sll.pcap", pcap_bytes({{1, 0, sll + std::string("\x86\xdd", 2) + kIpv6Packet},
                                                           {2, 0, sll_llc},
                                                           {3, 0, sll.substr(0, 10)}},
                                                          113));
    const std::vector<std::string> frames = replayed_frames(path);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0], ether_header(mac, 0x86dd) + kIpv6Packet);
    EXPECT_EQ(frames[1], ether_header(mac, 6) + llc) << "802.2 gets an 802.3 length";
    EXPECT_EQ(frames[2], ether_header(std::string(6, '\0'), 0)) << "a record cut inside its header";

    // SLL2: protocol, reserved, ifindex, ARPHRD, packet type, address length, address (8).
    const std::string sll2 = std::string("\x08\x00\x00\x00\x00\x00\x00\x02\x00\x01\x04\x06", 12) + mac +
                             std::string(2, '\0');
    const std::string path2 = write("sll2.pcap", pcap_bytes({{1, 0, sll2 + kIpv4Packet}}, 276));
    EXPECT_EQ(replayed_frames(path2), std::vector<std::string>{ether_header(mac, 0x0800) + kIpv4Packet});
}

TEST_F(PcapSourceTest, RawIpTakesItsEtherTypeFromTheVersionNibble) {
    const std::string zero_mac(6, '\0');
    for (const uint32_t linktype : {101u, 12u, 14u}) {
        const std::string path = write("raw.pcap", pcap_bytes({{1, 0, kIpv4Packet}, {2, 0, kIpv6Packet}, {3, 0, "\x10junk"}}, linktype));
        const std::vector<std::string> frames = replayed_frames(path);
        ASSERT_EQ(frames.size(), 3u) << linktype;
        EXPECT_EQ(frames[0], ether_header(zero_mac, 0x0800) + kIpv4Packet) << linktype;
        EXPECT_EQ(frames[1], ether_header(zero_mac, 0x86dd) + kIpv6Packet) << linktype;
        EXPECT_EQ(frames[2], ether_header(zero_mac, 0) + "\x10junk") << linktype;
    }
    EXPECT_EQ(replayed_frames(write("v4.pcap", pcap_bytes({{1, 0, kIpv4Packet}}, 228))),
              std::vector<std::string>{ether_header(zero_mac, 0x0800) + kIpv4Packet});
    EXPECT_EQ(replayed_frames(write("v6.pcap", pcap_bytes({{1, 0, kIpv6Packet}}, 229))),
              std::vector<std::string>{ether_header(zero_mac, 0x86dd) + kIpv6Packet});
}

TEST_F(PcapSourceTest, LoopbackHeadersMapTheAddressFamilyInEitherByteOrder) {
    const std::string zero_mac(6, '\0');
    const std::string little_inet6("\x1e\x00\x00\x00", 4);  // AF_INET6 on Darwin, written little-endian
    const std::string big_inet("\x00\x00\x00\x02", 4);      // AF_INET written big-endian
    const std::string path = write("null.pcap", pcap_bytes({{1, 0, little_inet6 + kIpv6Packet}, {2, 0, big_inet + kIpv4Packet}}, 0));
    EXPECT_EQ(replayed_frames(path), (std::vector<std::string>{ether_header(zero_mac, 0x86dd) + kIpv6Packet,
                                                                ether_header(zero_mac, 0x0800) + kIpv4Packet}));
    const std::string loop = write("loop.pcap", pcap_bytes({{1, 0, std::string("\x00\x00\x00\x18", 4) + kIpv6Packet}}, 108));
    EXPECT_EQ(replayed_frames(loop), std::vector<std::string>{ether_header(zero_mac, 0x86dd) + kIpv6Packet});
}

TEST_F(PcapSourceTest, ZeroLengthRecordsAreSkippedAndCountedPreloadedOrStreamed) {
    const std::string path =
        write("zero.pcap", pcap_bytes({{1, 0, frame(60, 'a')}, {2, 0, ""}, {3, 0, frame(60, 'c')}, {4, 0, ""}}));
    for (const char* preload : {"true", "false"}) {
        SCOPED_TRACE(std::string("preload ") + preload);
        const Outcome o = replay_whole({{"file", path}, {"preload", preload}});
        EXPECT_EQ(o.replay.frames, (std::vector<std::string>{frame(60, 'a'), frame(60, 'c')}));
        EXPECT_EQ(o.skipped, 2u);
        EXPECT_EQ(o.events.at("capture.skipped.empty_record"), 2u);
        EXPECT_EQ(o.errors, 0u);
    }
}

TEST_F(PcapSourceTest, ADamagedRecordEndsTheCaptureAfterTheRecordsBeforeItUnlessStrict) {
    RawRecord absurd{3, 0, frame(60, 'c'), 0x7fffffff};
    const std::string path = write("absurd.pcap", pcap_bytes({{1, 0, frame(60, 'a')}, {2, 0, frame(61, 'b')}, absurd,
                                                              {4, 0, frame(60, 'd')}}));
    for (const char* preload : {"true", "false"}) {
        SCOPED_TRACE(std::string("preload ") + preload);
        const Outcome o = replay_whole({{"file", path}, {"preload", preload}});
        EXPECT_EQ(o.replay.frames, (std::vector<std::string>{frame(60, 'a'), frame(61, 'b')}));
        EXPECT_EQ(o.errors, 1u);
        EXPECT_EQ(o.skipped, 0u);

        uint64_t replayed = 0;
        const std::string what = refusal({{"file", path}, {"preload", preload}, {"strict", "true"}}, &replayed).what();
        EXPECT_EQ(what.rfind(path + ": record 3: invalid packet capture length 2147483647, bigger than", 0), 0u) << what;
        EXPECT_EQ(replayed, std::string(preload) == "false" ? 2u : 0u) << "a stream replays up to the damage";
    }
}

TEST_F(PcapSourceTest, AFileCutInsideARecordReplaysTheRecordsBeforeTheCut) {
    const std::string whole = pcap_bytes({{1, 0, frame(60, 'a')}, {2, 0, frame(70, 'b')}, {3, 0, frame(80, 'c')}});
    // Cut in the third record's bytes, then in its header.
    for (const size_t cut : {whole.size() - 30, whole.size() - 80 - 10}) {
        const std::string path = write("cut.pcap", whole.substr(0, cut));
        PcapSource src(pcap_params({{"file", path}}));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "src", 0};
        src.open(env);
        EXPECT_TRUE(src.truncated());
        EXPECT_EQ(events_of(src).at("truncated_file"), 1u);
        EXPECT_EQ(events_of(src).at("capture.errors"), 0u) << "a cut is not damage";
        const Replay r = drain(src, true);
        EXPECT_EQ(r.packets, 2u);
        EXPECT_EQ(r.bytes, 130u);
        ASSERT_EQ(r.frames.size(), 2u);
        EXPECT_EQ(r.frames[1], frame(70, 'b'));
        src.close();
    }
}

// ---- pcapng, written block by block ---------------------------------------------------------

// A pcapng file, built block by block in either byte order.
struct Pcapng {
    bool big = false;
    std::string bytes;

    std::string u16(uint16_t v) const {
        return big ? std::string{char(v >> 8), char(v)} : std::string{char(v), char(v >> 8)};
    }
    std::string u32(uint32_t v) const { return big ? u16(uint16_t(v >> 16)) + u16(uint16_t(v)) : u16(uint16_t(v)) + u16(uint16_t(v >> 16)); }
    std::string u64(uint64_t v) const { return big ? u32(uint32_t(v >> 32)) + u32(uint32_t(v)) : u32(uint32_t(v)) + u32(uint32_t(v >> 32)); }
    static std::string padded(std::string s) {
        s.resize((s.size() + 3) & ~size_t(3), '\0');
        return s;
    }
    std::string option(uint16_t code, const std::string& value) const {
        return u16(code) + u16(uint16_t(value.size())) + padded(value);
    }
    std::string end_of_options() const { return u32(0); }

    Pcapng& block(uint32_t type, const std::string& body) {
        const std::string b = padded(body);
        const uint32_t total = uint32_t(12 + b.size());
        bytes += u32(type) + u32(total) + b + u32(total);
        return *this;
    }
    Pcapng& section() { return block(0x0A0D0D0A, u32(0x1A2B3C4D) + u16(1) + u16(0) + u64(~0ull)); }
    Pcapng& interface(uint16_t linktype, uint32_t snaplen, const std::string& options = "") {
        return block(1, u16(linktype) + u16(0) + u32(snaplen) + (options.empty() ? "" : options + end_of_options()));
    }
    Pcapng& packet(uint32_t id, uint64_t ts, const std::string& data, uint32_t wire = 0) {
        return block(6, u32(id) + u32(uint32_t(ts >> 32)) + u32(uint32_t(ts)) + u32(uint32_t(data.size())) +
                            u32(wire != 0 ? wire : uint32_t(data.size())) + padded(data));
    }
    Pcapng& simple(const std::string& data) { return block(3, u32(uint32_t(data.size())) + data); }
    Pcapng& old_packet(uint16_t id, uint16_t drops, uint64_t ts, const std::string& data) {
        return block(2, u16(id) + u16(drops) + u32(uint32_t(ts >> 32)) + u32(uint32_t(ts)) +
                            u32(uint32_t(data.size())) + u32(uint32_t(data.size())) + data);
    }
    Pcapng& statistics(uint32_t id, uint64_t ifdrop) {
        return block(5, u32(id) + u32(0) + u32(0) + option(5, u64(ifdrop)) + end_of_options());
    }
};

const std::string kMac = "\x02\x11\x22\x33\x44\x55";
const std::string kSll = std::string("\x00\x00\x00\x01\x00\x06", 6) + kMac + std::string(2, '\0');

TEST_F(PcapSourceTest, PcapngWithInterfacesOfDifferentLinkTypesAndSnaplensIsReadWhole) {
    // Section 1 (little-endian): Ethernet (snaplen 65535, microseconds) and Linux cooked
    // (snaplen 128, nanoseconds); blocks of every packet kind, statistics and a name
    // resolution block (no packet: tcpdump and tshark count nothing for it).
    Pcapng le;
    le.section()
        .interface(1, 65535)
        .interface(113, 128, le.option(9, "\x09"))
        .block(4, le.u16(1) + le.u16(8) + std::string("\x0a\x00\x00\x01hos\x00", 8) + le.u32(0))
        .packet(0, 1000000, frame(60, 'a'))
        .packet(1, 1500000000, kSll + std::string("\x08\x00", 2) + kIpv4Packet)
        .simple(frame(64, 'b'))
        .old_packet(1, 3, 1600000000, kSll + "\x86\xdd" + kIpv6Packet)
        .statistics(0, 5)
        .packet(0, 1700000, frame(60, 'c'), 1514);
    // Section 2 (big-endian): raw IP in units of 2^-10 s.
    Pcapng be;
    be.big = true;
    be.section().interface(101, 0, be.option(9, "\x8a")).packet(0, 2 * 1024, kIpv4Packet);
    const std::string path = write("multi.pcapng", le.bytes + be.bytes);

    const std::vector<std::string> want = {frame(60, 'a'), ether_header(kMac, 0x0800) + kIpv4Packet, frame(64, 'b'),
                                           ether_header(kMac, 0x86dd) + kIpv6Packet, frame(60, 'c'),
                                           ether_header(std::string(6, '\0'), 0x0800) + kIpv4Packet};
    EXPECT_EQ(tshark_count(path, ""), want.size()) << "tshark reads the crafted file whole";
    for (const char* preload : {"true", "false"}) {
        SCOPED_TRACE(std::string("preload ") + preload);
        const Outcome o = replay_whole({{"file", path}, {"preload", preload}});
        EXPECT_EQ(o.replay.frames, want);
        EXPECT_EQ(o.wire, (std::vector<uint32_t>{60, 34, 64, 54, 1514, 34}));
        EXPECT_EQ(o.events.at("capture.interface_drops"), 5u + 3u) << "statistics block and packet block drops";
        EXPECT_EQ(o.skipped + o.errors, 0u);
    }
    // Each interface's resolution: offsets from the first packet (1 s).
    const CaptureFile c(path, Location{path});
    std::vector<uint64_t> offsets;
    for (const CaptureRecord& r : c.records()) offsets.push_back(r.offset_ns);
    EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 500000000, 500000000, 600000000, 700000000, 1000000000}))
        << "a simple packet block has no time: it replays with the one before";
}

TEST_F(PcapSourceTest, ADamagedPcapngBlockEndsTheCaptureNamingTheRecord) {
    Pcapng ng;
    ng.section().interface(1, 65535).packet(0, 1, frame(60, 'a')).packet(3, 2, frame(60, 'b')).packet(0, 3, frame(60, 'c'));
    const std::string undefined = write("undefined.pcapng", ng.bytes);
    Pcapng bad_trailer;
    bad_trailer.section().interface(1, 65535).packet(0, 1, frame(60, 'a')).packet(0, 2, frame(60, 'b'));
    bad_trailer.bytes[bad_trailer.bytes.size() - 1] = 0x7f;  // the second packet's trailing length
    const std::string trailer = write("trailer.pcapng", bad_trailer.bytes);
    for (const auto& [path, why] :
         {std::pair{undefined, std::string("record 2: a packet of interface 3, but the section describes 1 interface(s)")},
          std::pair{trailer, std::string("record 2: block total length in header and trailer don't match")}}) {
        SCOPED_TRACE(path);
        const Outcome o = replay_whole({{"file", path}});
        EXPECT_EQ(o.replay.frames, std::vector<std::string>{frame(60, 'a')});
        EXPECT_EQ(o.errors, 1u);
        EXPECT_EQ(std::string(refusal({{"file", path}, {"strict", "true"}}).what()), path + ": " + why);
    }
    // Cut inside a block: the packets before it, as a cut classic pcap.
    Pcapng whole;
    whole.section().interface(1, 65535).packet(0, 1, frame(60, 'a')).packet(0, 2, frame(60, 'b'));
    const std::string cut = write("cut.pcapng", whole.bytes.substr(0, whole.bytes.size() - 10));
    const Outcome o = replay_whole({{"file", cut}, {"strict", "true"}});
    EXPECT_EQ(o.replay.frames, std::vector<std::string>{frame(60, 'a')});
    EXPECT_EQ(o.events.at("truncated_file"), 1u);
    EXPECT_EQ(o.errors, 0u);
}

// ---- PPP and 802.11 ----------------------------------------------------------------------------

TEST_F(PcapSourceTest, PppFramesBecomeEthernetByTheirProtocolAndControlProtocolsAreSkipped) {
    const std::string ppp = "\xff\x03";
    const std::string mpls = std::string("\x00\x01\x01\x40", 4) + kIpv4Packet;  // one label, bottom of stack
    const std::string path = write(
        "ppp.pcap", pcap_bytes({{1, 0, ppp + std::string("\x00\x21", 2) + kIpv4Packet},
                                {2, 0, std::string("\x00\x21", 2) + kIpv4Packet},  // no address and control
                                {3, 0, "\x21" + kIpv4Packet},                       // protocol field compressed
                                {4, 0, ppp + std::string("\x00\x57", 2) + kIpv6Packet},
                                {5, 0, ppp + std::string("\xc0\x21\x01\x01\x00\x04", 6)},  // LCP
                                {6, 0, ppp + std::string("\x80\x21\x01\x01\x00\x04", 6)},  // IPCP
                                {7, 0, ppp + std::string("\x02\x81", 2) + mpls},
                                {8, 0, ppp + std::string("\x00\x3d", 2) + "mp"},  // multilink: no EtherType
                                {9, 0, "\xff\x03"}},
                               9));
    const std::string zero(6, '\0');
    const Outcome o = replay_whole({{"file", path}});
    EXPECT_EQ(o.replay.frames,
              (std::vector<std::string>{ether_header(zero, 0x0800) + kIpv4Packet, ether_header(zero, 0x0800) + kIpv4Packet,
                                        ether_header(zero, 0x0800) + kIpv4Packet, ether_header(zero, 0x86dd) + kIpv6Packet,
                                        ether_header(zero, 0x8847) + mpls}));
    EXPECT_EQ(o.events.at("capture.skipped.ppp_control"), 2u);
    EXPECT_EQ(o.events.at("capture.skipped.ppp_other_protocol"), 1u);
    EXPECT_EQ(o.events.at("capture.skipped.link_header_cut"), 1u);
    EXPECT_EQ(o.replay.packets + o.skipped, 9u);
    EXPECT_EQ(o.replay.packets + o.skipped, tcpdump_reads(path, dir_).packets);
}

// 802.11 headers: frame control, duration, addresses 1-3, sequence, [address 4], [QoS].
const std::string kA1 = "\x11\x11\x11\x11\x11\x01", kA2 = "\x22\x22\x22\x22\x22\x02", kA3 = "\x33\x33\x33\x33\x33\x03",
                  kA4 = "\x44\x44\x44\x44\x44\x04";
std::string wlan(uint8_t fc0, uint8_t fc1, bool four_addresses = false) {
    return std::string{char(fc0), char(fc1), 0, 0} + kA1 + kA2 + kA3 + std::string(2, '\0') + (four_addresses ? kA4 : "");
}
std::string snap(uint16_t ether_type) { return std::string("\xaa\xaa\x03\x00\x00\x00", 6) + char(ether_type >> 8) + char(ether_type); }

TEST_F(PcapSourceTest, Wlan80211DataFramesBecomeEthernetWithTheirAddressesAndTheRestIsSkippedByReason) {
    const std::string stp = std::string("\x42\x42\x03", 3) + std::string(35, '\0');  // LLC, not SNAP
    const std::string path = write(
        "wlan.pcap",
        pcap_bytes({{1, 0, wlan(0x08, 0x02) + snap(0x0800) + kIpv4Packet},        // from the AP: DA a1, SA a3
                    {2, 0, wlan(0x08, 0x01) + snap(0x0800) + kIpv4Packet},        // to the AP: DA a3, SA a2
                    {3, 0, wlan(0x08, 0x03, true) + snap(0x0800) + kIpv4Packet},  // WDS: DA a3, SA a4
                    {4, 0, wlan(0x88, 0x02) + std::string(2, '\0') + snap(0x86dd) + kIpv6Packet},  // QoS data
                    {5, 0, wlan(0x08, 0x00) + stp},                                // ad hoc: DA a1, SA a2; 802.3
                    {6, 0, wlan(0x80, 0x00) + std::string(12, '\0')},              // beacon
                    {7, 0, std::string("\xd4\x00\x00\x00", 4) + kA1},              // ACK
                    {8, 0, wlan(0x48, 0x01)},                                      // null data
                    {9, 0, wlan(0x08, 0x41) + std::string(20, '\x5a')},            // protected
                    {10, 0, "\x08"}},
                   105));
    const Outcome o = replay_whole({{"file", path}});
    const auto eth = [](const std::string& da, const std::string& sa, uint16_t type) {
        return da + sa + char(type >> 8) + char(type);
    };
    EXPECT_EQ(o.replay.frames, (std::vector<std::string>{eth(kA1, kA3, 0x0800) + kIpv4Packet,
                                                          eth(kA3, kA2, 0x0800) + kIpv4Packet,
                                                          eth(kA3, kA4, 0x0800) + kIpv4Packet,
                                                          eth(kA1, kA3, 0x86dd) + kIpv6Packet,
                                                          eth(kA1, kA2, uint16_t(stp.size())) + stp}));
    for (const char* reason : {"wlan_management", "wlan_control", "wlan_no_data", "wlan_protected", "link_header_cut"})
        EXPECT_EQ(o.events.at(std::string("capture.skipped.") + reason), 1u) << reason;
    EXPECT_EQ(o.replay.packets + o.skipped, tcpdump_reads(path, dir_).packets);
    EXPECT_EQ(tshark_count(path, "ip or ipv6"), 4u) << "tshark finds IP in the same frames";
}

TEST_F(PcapSourceTest, RadiotapAndPpiHeadersAreStrippedWithTheFrameCheckSequence) {
    // Radiotap: version, pad, length 17, present = TSFT | Flags; TSFT (8 bytes at 8), Flags
    // 0x10: the frame ends in a 4-byte FCS.
    const std::string radiotap = std::string("\x00\x00\x11\x00\x03\x00\x00\x00", 8) + std::string(8, '\x01') + "\x10";
    const std::string data = wlan(0x08, 0x02) + snap(0x0800) + kIpv4Packet;
    const std::string fcs = "\xde\xad\xbe\xef";
    const std::string bare = std::string("\x00\x00\x08\x00\x00\x00\x00\x00", 8);  // no fields
    const std::string path = write("radiotap.pcap", pcap_bytes({{1, 0, radiotap + data + fcs},
                                                               {2, 0, bare + wlan(0x80, 0x00) + std::string(12, '\0')},
                                                               {3, 0, std::string("\x00\x00\x40\x00", 4)}},
                                                              127));
    const std::string want = kA1 + kA3 + std::string("\x08\x00", 2) + kIpv4Packet;
    const Outcome o = replay_whole({{"file", path}});
    EXPECT_EQ(o.replay.frames, std::vector<std::string>{want});
    EXPECT_EQ(o.wire, std::vector<uint32_t>{uint32_t(want.size())});
    EXPECT_EQ(o.events.at("capture.skipped.wlan_management"), 1u);
    EXPECT_EQ(o.events.at("capture.skipped.link_header_cut"), 1u) << "a radiotap length past the record";
    EXPECT_EQ(tshark_count(path, "ip"), 1u);

    // PPI: version, flags, length 8, link type 105 (little-endian), then the 802.11 frame.
    const std::string ppi = std::string("\x00\x00\x08\x00\x69\x00\x00\x00", 8);
    const std::string ppi_path = write("ppi.pcap", pcap_bytes({{1, 0, ppi + data}}, 192));
    EXPECT_EQ(replay_whole({{"file", ppi_path}}).replay.frames, std::vector<std::string>{want});
}

TEST_F(PcapSourceTest, EachPacketCarriesTheWireLengthItsRecordGave) {
    RawRecord snapped{1, 0, frame(60, 'a')};
    snapped.wire = 1514;
    const std::string path = write("snap.pcap", pcap_bytes({snapped, {2, 0, frame(60, 'b')}}, 1, false, 60));
    for (const char* preload : {"true", "false"}) {
        const Outcome o = replay_whole({{"file", path}, {"preload", preload}});
        EXPECT_EQ(o.wire, (std::vector<uint32_t>{1514, 60})) << preload;
        EXPECT_EQ(o.replay.bytes, 120u) << "what is replayed is what was captured";
    }
}

TEST_F(PcapSourceTest, MicrosecondAndNanosecondFilesKeepTheirTimestampPrecision) {
    // Same recorded gap of 150 ms written both ways; speed 1 waits for it either way.
    for (const bool nano : {false, true}) {
        const uint32_t frac = nano ? 150000000 : 150000;
        const std::string path = write("precision.pcap", pcap_bytes({{5, 0, frame(60, 'a')}, {5, frac, frame(60, 'b')}}, 1, nano));
        PcapSource src(pcap_params({{"file", path}, {"speed", "1"}}));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "src", 0};
        src.open(env);
        const Replay r = drain(src, false, std::chrono::seconds(5));
        EXPECT_EQ(r.packets, 2u);
        EXPECT_GE(r.seconds, 0.147) << (nano ? "nanosecond file" : "microsecond file");
        EXPECT_LT(r.seconds, 1.0) << (nano ? "nanosecond file" : "microsecond file");
        src.close();
    }
}

// ---- big captures: preload or stream ---------------------------------------------------------

// A capture of `count` Ethernet frames of varied lengths (60 to 1514 bytes, every 97th a
// 9000-byte jumbo that chains), written with libpcap.
std::string write_generated(const std::string& path, uint32_t count) {
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* out = pcap_dump_open(dead, path.c_str());
    std::string bytes(9000, '\0');
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t len = i % 97 == 96 ? 9000 : 60 + (i * 7919u) % 1455;
        for (uint32_t k = 0; k < len; ++k) bytes[k] = static_cast<char>(i + k * 31);
        pcap_pkthdr h{};
        h.ts.tv_sec = 1000 + i / 1000;
        h.ts.tv_usec = static_cast<suseconds_t>(i % 1000 * 1000);
        h.caplen = h.len = len;
        pcap_dump(reinterpret_cast<u_char*>(out), &h, reinterpret_cast<const u_char*>(bytes.data()));
    }
    pcap_dump_close(out);
    pcap_close(dead);
    return path;
}

TEST_F(PcapSourceTest, ACaptureLargerThanItsPreloadBudgetIsStreamedAndReplaysExactly) {
    // 6000 frames, about 5 MB: with a 1 MiB budget the source holds a fraction of it at a time.
    const std::string path = write_generated(dir_ + "/big.pcap", 6000);
    const CaptureContents libpcap = read_with_libpcap(path);
    ASSERT_EQ(libpcap.frames.size(), 6000u);
    PcapSource src(pcap_params({{"file", path}, {"loop", "2"}, {"preload_mb", "1"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    ASSERT_TRUE(src.streaming()) << "auto must stream a capture bigger than its budget";
    EXPECT_LT(uint64_t(src.template_pool_capacity()) * CaptureStream::kSegmentRoom, fs::file_size(path) / 2)
        << "the stream's buffers should hold a fraction of the capture";
    const Replay r = drain(src, true);
    EXPECT_EQ(r.packets, 2 * libpcap.frames.size());
    EXPECT_EQ(r.bytes, 2 * libpcap.bytes);
    ASSERT_EQ(r.frames.size(), 2 * libpcap.frames.size());
    EXPECT_TRUE(std::equal(libpcap.frames.begin(), libpcap.frames.end(), r.frames.begin()))
        << "the first pass differs from the file";
    EXPECT_TRUE(std::equal(libpcap.frames.begin(), libpcap.frames.end(), r.frames.begin() + 6000))
        << "the second pass differs from the file";
    EXPECT_EQ(pool.available(), pool.capacity());
    src.close();
    EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
}

TEST_F(PcapSourceTest, AutoPreloadsACaptureThatFitsItsBudgetAndPreloadChoosesEitherWay) {
    const std::string path = pcap_path("pcpp__example.pcap");
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    for (const auto& [preload, budget, streams] :
         {std::tuple{"auto", "64", false}, std::tuple{"auto", "0", false}, std::tuple{"false", "64", true},
          std::tuple{"true", "1", false}}) {
        PcapSource src(pcap_params({{"file", path}, {"preload", preload}, {"preload_mb", budget}}));
        src.open(env);
        EXPECT_EQ(src.streaming(), streams) << "preload " << preload << ", preload_mb " << budget;
        src.close();
    }
}

TEST_F(PcapSourceTest, AStreamPacedByItsTimestampsKeepsTheGapsAcrossLoops) {
    // Two frames 100 ms apart, replayed twice: 200 ms, the loop boundary being a zero gap.
    const std::string path = write("gap.pcap", pcap_bytes({{5, 0, frame(60, 'a')}, {5, 100000, frame(60, 'b')}}));
    PcapSource src(pcap_params({{"file", path}, {"loop", "2"}, {"speed", "1"}, {"preload", "false"}}));
    MbufPool pool = app_pool(511);
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src, false, std::chrono::seconds(5));
    EXPECT_EQ(r.packets, 4u);
    expect_paced(r, 0.2);
    src.close();
}

TEST_F(PcapSourceTest, ClosingAStreamMidReplayGivesEveryBufferBack) {
    const std::string path = write_generated(dir_ + "/mid.pcap", 3000);
    PcapSource src(pcap_params({{"file", path}, {"loop", "0"}, {"preload", "false"}, {"preload_mb", "1"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    uint64_t packets = 0;
    Burst b;
    while (packets < 10000) {
        b.n = 0;
        ASSERT_NE(src.produce(b), SourceStatus::Done) << "a looping stream never ends by itself";
        packets += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    src.close();
    EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
    EXPECT_EQ(pool.available(), pool.capacity());
    b.n = 0;
    EXPECT_EQ(src.produce(b), SourceStatus::Done) << "a closed source emits nothing";
}

TEST_F(PcapSourceTest, AStreamsRefillWakesTheReaderAndTheReplayEachTimeWithoutATimeout) {
    // The consumer replays as a tile does (parked on its doorbell while nothing is ready), but
    // takes records only once the reader has used every template and must wait for some back.
    // So each refill has both waits: the reader's for room (a consume() wakes it) and the
    // consumer's for records (the reader rings its doorbell). A lost wake-up in either
    // direction shows as a wait ended by its timeout: the reader's with the room already there
    // (reader_wait_timeouts), the consumer's 20 ms park that nobody rang (park_timeouts). (The
    // consumer may find records ready each time it looks, when the reader runs first.)
    constexpr uint32_t kRecords = 4000;
    const std::string path = write_generated(dir_ + "/refill.pcap", kRecords);
    struct Waits {
        uint64_t reader = 0, reader_timeouts = 0, parks = 0, park_timeouts = 0;
        bool few_timeouts() const { return reader_timeouts * 4 <= reader && park_timeouts * 4 <= parks; }
    };
    const auto replay = [&] {
        Doorbell bell;
        CaptureStreamSpec spec;
        spec.path = path;
        spec.app_segments_max = 8;  // the jumbo frames chain
        spec.consumer_bell = &bell;
        CaptureStream stream(spec);
        const uint32_t most_a_record_takes = 5;  // 9000 bytes in 2048-byte templates
        uint64_t consumed = 0;
        for (;;) {
            const uint32_t ready = stream.ready(stream.pool_capacity());
            const bool all_read = consumed + ready == kRecords;
            if (ready != 0 && (stream.pool_available() < most_a_record_takes || all_read)) {
                // Out of templates: give them back only once the reader waits for them (or has
                // read the whole file).
                for (const uint64_t waits = stream.reader_waits();
                     stream.reader_waits() == waits && consumed + stream.ready(stream.pool_capacity()) < kRecords;)
                    std::this_thread::yield();
                const uint32_t all = stream.ready(stream.pool_capacity());  // the reader waits: nothing comes now
                stream.consume(all);
                consumed += all;
                continue;
            }
            if (stream.drained()) break;
            bell.prepare_park();
            if (stream.ready(stream.pool_capacity()) != ready || stream.drained()) {
                bell.cancel_park();
                continue;
            }
            bell.park(std::chrono::milliseconds(20));
        }
        EXPECT_EQ(consumed, kRecords);
        EXPECT_GE(stream.reader_waits(), 4u) << "a refill per pool of templates (511 of them)";
        stream.stop();
        EXPECT_EQ(stream.pool_available(), stream.pool_capacity());
        return Waits{stream.reader_waits(), stream.reader_wait_timeouts(), bell.parks(), bell.park_timeouts()};
    };
    // Without the wake-ups every wait ends by its timeout, each time; a loaded machine (a
    // sanitizer build beside other tests on 2 CPUs) descheduling a thread past a timeout now
    // and then makes a few. So up to three replays, and the test fails only if none is clean.
    Waits w;
    for (int attempt = 0; attempt < 3; ++attempt) {
        w = replay();
        if (HasFailure() || w.few_timeouts()) break;
    }
    EXPECT_LE(w.reader_timeouts * 4, w.reader)
        << w.reader_timeouts << " of " << w.reader << " reader waits found the room there at their timeout, in each of 3 replays";
    EXPECT_LE(w.park_timeouts * 4, w.parks)
        << w.park_timeouts << " of " << w.parks << " consumer parks timed out, in each of 3 replays: the reader's rings were lost";
}

TEST_F(PcapSourceTest, AStreamsReaderAnnouncesItsRecordsBeforeItWaitsForTemplates) {
    // Records of 200000 bytes take 98 templates each: the pool (511) holds 5, fewer than the
    // reader's announcement every 16 records, so each refill's records are announced only by
    // the ring the reader owes before it waits for templates. The consumer parks for 2 s
    // whenever nothing is ready: without that ring each refill would sleep it out.
    constexpr uint32_t kRecords = 12, kBytes = 200000;
    const std::string path = dir_ + "/huge.pcap";
    {
        pcap_t* dead = pcap_open_dead(DLT_EN10MB, 262144);
        pcap_dumper_t* out = pcap_dump_open(dead, path.c_str());
        const std::string bytes(kBytes, '\x5a');
        for (uint32_t i = 0; i < kRecords; ++i) {
            pcap_pkthdr h{};
            h.ts.tv_sec = 1000 + i;
            h.caplen = h.len = kBytes;
            pcap_dump(reinterpret_cast<u_char*>(out), &h, reinterpret_cast<const u_char*>(bytes.data()));
        }
        pcap_dump_close(out);
        pcap_close(dead);
    }
    Doorbell bell;
    CaptureStreamSpec spec;
    spec.path = path;
    spec.app_segments_max = 128;  // 200000 bytes in 2048-byte mbufs
    spec.consumer_bell = &bell;
    CaptureStream stream(spec);
    ASSERT_LT(stream.pool_capacity() / 98, 16u) << "the pool must fill before the reader's first regular announcement";
    uint32_t consumed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (!stream.drained()) {
        if (const uint32_t n = stream.ready(stream.pool_capacity()); n != 0) {
            stream.consume(n);
            consumed += n;
            continue;
        }
        bell.prepare_park();
        if (stream.ready(1) != 0 || stream.drained()) {
            bell.cancel_park();
            continue;
        }
        bell.park(std::chrono::seconds(2));
    }
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(consumed, kRecords);
    EXPECT_EQ(bell.park_timeouts(), 0u) << "the consumer slept out a 2 s park: a refill's records went unannounced";
    EXPECT_LT(took, std::chrono::milliseconds(1500));
    stream.stop();
    EXPECT_EQ(stream.pool_available(), stream.pool_capacity());
    fs::remove(path);
}

TEST_F(PcapSourceTest, AStopRequestWhileLoadingEndsTheLoadAndTheReplay) {
    // More records than are read between two looks at the stop request.
    const std::string path = write_generated(dir_ + "/stopped.pcap", 9000);
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    for (const char* preload : {"true", "false"}) {
        SCOPED_TRACE(std::string("preload ") + preload);
        PcapSource src(pcap_params({{"file", path}, {"preload", preload}}));
        request_stop();
        src.open(env);
        clear_stop_request();
        EXPECT_EQ(src.template_packets(), 0u) << "the load went on after the request";
        Burst b;
        EXPECT_EQ(src.produce(b), SourceStatus::Done);
        EXPECT_EQ(b.n, 0);
        src.close();
        EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
        EXPECT_EQ(pool.available(), pool.capacity());
    }
}

}  // namespace
}  // namespace tp
