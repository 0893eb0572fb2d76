// The `pcap` source on what a capture may hold: bad input refused where it is (missing, empty,
// truncated, unknown versions and link types, damaged records), the link layers it turns into
// Ethernet (Linux cooked, raw IP, loopback, PPP, 802.11, radiotap and PPI), pcapng written block
// by block, and each packet's wire length and timestamp precision.
#include "tests/support/pcap_source_fixture.hpp"

namespace tp {
namespace {

using namespace pcap_test;  // the shared fixture and its helpers

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

// What validate checks (check_params), cheap for any size of capture: a pcapng's link type is
// its interface's, in a block after the header; the first record's is checked as a classic
// file's header is.
TEST_F(PcapSourceTest, APcapngOfAnUnsupportedLinkTypeIsRefusedByTheConfigCheck) {
    Pcapng ng;
    ng.section().interface(0xfff, 65535).packet(0, 1, frame(60, 'a'));
    const std::string path = write("unknown.pcapng", ng.bytes);
    try {
        PcapSource::check_params(pcap_params({{"file", path}}));
        ADD_FAILURE() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": record 1: interface 0: link type UNKNOWN (4095) is not supported", 0), 0u)
            << e.what();
    }
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

}  // namespace
}  // namespace tp
