// The `pcap` source on every shared capture, checked against tcpdump, the reference reader:
// where tcpdump reads an Ethernet capture the source replays the same frames, byte for byte; a
// Linux cooked, raw IP or loopback capture replays the same packets behind a synthetic Ethernet
// header that `parse` reads; where tcpdump fails the source refuses with a one-line message
// naming the file (and the record at fault).
#include "tests/support/pcap_source_fixture.hpp"

namespace tp {
namespace {

using namespace pcap_test;  // the shared fixture and its helpers

// ---- every shared capture against tcpdump --------------------------------------------------


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

TEST(SharedCaptures, AreAllPresent) { EXPECT_GE(test::shared_capture_names().size(), 40u); }

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
                         testing::Combine(testing::ValuesIn(test::shared_capture_names()), testing::Values("true", "false")),
                         test_name_of);

}  // namespace
}  // namespace tp
