// parse: what later stages rely on — header offsets and packet types in the mbuf, type bits
// and a symmetric flow hash in the descriptor, malformed packets counted by reason, and no
// read past the packet whatever its length.
#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "descriptors/burst.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/parse.hpp"

namespace tp {
namespace {

// ---- packet crafting ------------------------------------------------------------------------

using Bytes = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;
using Ipv6Addr = std::array<uint8_t, 16>;

constexpr Mac kMacA{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
constexpr Mac kMacB{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};
constexpr uint32_t kIpA = 0x0a000001;  // 10.0.0.1
constexpr uint32_t kIpB = 0xc0a80102;  // 192.168.1.2
constexpr Ipv6Addr kIp6A{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
constexpr Ipv6Addr kIp6B{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02};

constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherIpv6 = 0x86dd;
constexpr uint16_t kEtherArp = 0x0806;
constexpr uint8_t kIcmp = 1, kTcp = 6, kUdp = 17, kIcmpv6 = 58;
constexpr uint8_t kHopByHop = 0, kRouting = 43, kFragment = 44, kAh = 51, kDestOpts = 60;

void put8(Bytes& b, uint8_t v) { b.push_back(v); }
void put16(Bytes& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
}
void put32(Bytes& b, uint32_t v) {
    put16(b, static_cast<uint16_t>(v >> 16));
    put16(b, static_cast<uint16_t>(v));
}
void put(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }
template <size_t N>
void put(Bytes& b, const std::array<uint8_t, N>& a) { b.insert(b.end(), a.begin(), a.end()); }
Bytes payload(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(0xa0 + i);
    return b;
}

struct Tag {
    uint16_t tpid;
    uint16_t vid;
};

Bytes ethernet(uint16_t ether_type, const Bytes& l3, std::vector<Tag> tags = {},
               const Mac& dst = kMacB, const Mac& src = kMacA) {
    Bytes b;
    put(b, dst);
    put(b, src);
    for (const Tag& t : tags) {
        put16(b, t.tpid);
        put16(b, t.vid);
    }
    put16(b, ether_type);
    put(b, l3);
    return b;
}

struct Ipv4Fields {
    uint32_t src = kIpA;
    uint32_t dst = kIpB;
    uint8_t ihl = 5;              // header words; options are NOPs
    uint16_t flags_offset = 0;    // MF 0x2000, offset in 8-byte units
    int total_override = -1;      // >= 0: write this total length instead of the true one
    uint8_t version = 4;
};

Bytes ipv4(uint8_t proto, const Bytes& l4, Ipv4Fields f = {}) {
    Bytes b;
    put8(b, static_cast<uint8_t>(f.version << 4 | f.ihl));
    put8(b, 0);
    const size_t header = std::max<size_t>(f.ihl, 5) * 4;
    put16(b, static_cast<uint16_t>(f.total_override >= 0 ? f.total_override : header + l4.size()));
    put16(b, 0x1234);  // id
    put16(b, f.flags_offset);
    put8(b, 64);
    put8(b, proto);
    put16(b, 0);  // checksum: parse does not verify it
    put32(b, f.src);
    put32(b, f.dst);
    while (b.size() < header) put8(b, 0x01);  // NOP options
    put(b, l4);
    return b;
}

// `rest` starts with the header `next` names (extension headers, then L4).
Bytes ipv6(uint8_t next, const Bytes& rest, const Ipv6Addr& src = kIp6A,
           const Ipv6Addr& dst = kIp6B) {
    Bytes b;
    put32(b, 0x60000000);
    put16(b, static_cast<uint16_t>(rest.size()));
    put8(b, next);
    put8(b, 64);
    put(b, src);
    put(b, dst);
    put(b, rest);
    return b;
}

// Hop-by-hop, routing or destination options header of `len` bytes (a multiple of 8).
Bytes option_header(uint8_t next, size_t len) {
    Bytes b(len, 0);
    b[0] = next;
    b[1] = static_cast<uint8_t>(len / 8 - 1);
    return b;
}
// Authentication header of `len` bytes (a multiple of 4, at least 12).
Bytes ah_header(uint8_t next, size_t len) {
    Bytes b(len, 0);
    b[0] = next;
    b[1] = static_cast<uint8_t>(len / 4 - 2);
    return b;
}
Bytes fragment_header(uint8_t next, uint16_t offset_units, bool more) {
    Bytes b{next, 0};
    put16(b, static_cast<uint16_t>(offset_units << 3 | (more ? 1 : 0)));
    put32(b, 0xfeedf00d);
    return b;
}

Bytes tcp(uint16_t sport, uint16_t dport, uint8_t offset_words = 5, size_t data = 0) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put32(b, 1000);  // seq
    put32(b, 0);     // ack
    put8(b, static_cast<uint8_t>(offset_words << 4));
    put8(b, 0x02);  // SYN
    put16(b, 65535);
    put16(b, 0);
    put16(b, 0);
    while (b.size() < size_t(std::max<uint8_t>(offset_words, 5)) * 4) put8(b, 0x01);  // NOP
    put(b, payload(data));
    return b;
}
Bytes udp(uint16_t sport, uint16_t dport, size_t data = 0) {
    Bytes b;
    put16(b, sport);
    put16(b, dport);
    put16(b, static_cast<uint16_t>(8 + data));
    put16(b, 0);
    put(b, payload(data));
    return b;
}
Bytes icmp_echo(uint8_t type, size_t data = 0) {  // 8 (ICMP) or 128 (ICMPv6)
    Bytes b{type, 0, 0, 0};
    put32(b, 0x00010001);
    put(b, payload(data));
    return b;
}
Bytes arp() {
    Bytes b;
    put16(b, 1);
    put16(b, kEtherIpv4);
    put8(b, 6);
    put8(b, 4);
    put16(b, 1);
    put(b, kMacA);
    put32(b, kIpA);
    put(b, Mac{});
    put32(b, kIpB);
    return b;
}

// Parses a heap copy of exactly the given bytes, so AddressSanitizer sees any over-read.
ParseResult parse_copy(const Bytes& frame, size_t len) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[len == 0 ? 1 : len]);
    if (len != 0) std::memcpy(copy.get(), frame.data(), len);
    if (len == 0) {
        // Even the one byte that exists must not be looked at: parse from one past it.
        return parse_headers(copy.get() + 1, 0);
    }
    return parse_headers(copy.get(), static_cast<uint32_t>(len));
}
ParseResult parse_copy(const Bytes& frame) { return parse_copy(frame, frame.size()); }

// ---- well-formed packets --------------------------------------------------------------------

TEST(ParseHeaders, EthernetIpv4TcpFillsOffsetsTypesAndHash) {
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(40000, 443, 8, 10))));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l2_len, 14);
    EXPECT_EQ(r.l3_len, 20);
    EXPECT_EQ(r.l4_len, 32);  // data offset 8 words: 12 bytes of options
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP);
    EXPECT_EQ(r.type, ptype::kL3Ipv4 | ptype::kL4Tcp | ptype::kParsed);
    EXPECT_NE(r.flow_hash, 0u);
}

TEST(ParseHeaders, Ipv4OptionsAreInsideL3LenAndTypedIpv4Ext) {
    Ipv4Fields f;
    f.ihl = 7;
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kUdp, udp(53, 5353, 4), f)));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l3_len, 28);
    EXPECT_EQ(r.l4_len, 8);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT | RTE_PTYPE_L4_UDP);
}

TEST(ParseHeaders, Ipv4UdpHasAnEightByteL4Header) {
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kUdp, udp(1234, 53, 30))));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l4_len, 8);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP);
    EXPECT_EQ(r.type, ptype::kL3Ipv4 | ptype::kL4Udp | ptype::kParsed);
}

TEST(ParseHeaders, IcmpAndIcmpv6AreBothTypedIcmp) {
    const ParseResult v4 = parse_copy(ethernet(kEtherIpv4, ipv4(kIcmp, icmp_echo(8, 16))));
    EXPECT_FALSE(v4.malformed());
    EXPECT_EQ(v4.l4_len, 8);
    EXPECT_EQ(v4.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_ICMP);
    EXPECT_EQ(v4.type, ptype::kL3Ipv4 | ptype::kL4Icmp | ptype::kParsed);

    const ParseResult v6 = parse_copy(ethernet(kEtherIpv6, ipv6(kIcmpv6, icmp_echo(128, 16))));
    EXPECT_FALSE(v6.malformed());
    EXPECT_EQ(v6.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_ICMP);
    EXPECT_EQ(v6.type, ptype::kL3Ipv6 | ptype::kL4Icmp | ptype::kParsed);
}

TEST(ParseHeaders, Ipv6TcpFillsOffsets) {
    const ParseResult r = parse_copy(ethernet(kEtherIpv6, ipv6(kTcp, tcp(50000, 80, 5, 100))));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l2_len, 14);
    EXPECT_EQ(r.l3_len, 40);
    EXPECT_EQ(r.l4_len, 20);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_TCP);
    EXPECT_EQ(r.type, ptype::kL3Ipv6 | ptype::kL4Tcp | ptype::kParsed);
}

Bytes ipv6_extension_chain_tcp() {
    Bytes rest = option_header(kRouting, 8);       // hop-by-hop
    put(rest, option_header(kDestOpts, 24));         // routing
    put(rest, option_header(kAh, 16));               // destination options
    put(rest, ah_header(kTcp, 24));                  // AH
    put(rest, tcp(443, 61000, 6));
    return ethernet(kEtherIpv6, ipv6(kHopByHop, rest));
}

TEST(ParseHeaders, Ipv6ExtensionHeaderChainIsInsideL3Len) {
    const ParseResult r = parse_copy(ipv6_extension_chain_tcp());
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l3_len, 40 + 8 + 24 + 16 + 24);
    EXPECT_EQ(r.l4_len, 24);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT | RTE_PTYPE_L4_TCP);
    EXPECT_EQ(r.type, ptype::kL3Ipv6 | ptype::kL4Tcp | ptype::kParsed);
}

TEST(ParseHeaders, Ipv6EspEndsTheChainAsAnOpaqueL4) {
    Bytes esp;
    put32(esp, 0x1000);
    put(esp, payload(20));
    const ParseResult r =
        parse_copy(ethernet(kEtherIpv6, ipv6(kDestOpts, [&] {
                                Bytes b = option_header(50, 8);
                                put(b, esp);
                                return b;
                            }())));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l3_len, 48);
    EXPECT_EQ(r.l4_len, 0);
    EXPECT_EQ(r.type & ptype::kL4Mask, ptype::kL4Other);
}

Bytes ipv6_fragment(uint16_t offset_units, bool more, const Bytes& data,
                    const Ipv6Addr& src = kIp6A, const Ipv6Addr& dst = kIp6B) {
    Bytes rest = fragment_header(kUdp, offset_units, more);
    put(rest, data);
    return ethernet(kEtherIpv6, ipv6(kFragment, rest, src, dst));
}

TEST(ParseHeaders, Ipv6NonFirstFragmentHasNoL4Header) {
    const ParseResult r = parse_copy(ipv6_fragment(185, false, payload(64)));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l3_len, 48);
    EXPECT_EQ(r.l4_len, 0);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT | RTE_PTYPE_L4_FRAG);
    EXPECT_EQ(r.type, ptype::kL3Ipv6 | ptype::kL4Frag | ptype::kParsed);
}

TEST(ParseHeaders, Ipv6FirstFragmentKeepsItsL4HeaderButIsTypedFragment) {
    const ParseResult r = parse_copy(ipv6_fragment(0, true, udp(4000, 4789, 64)));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l4_len, 8);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT | RTE_PTYPE_L4_FRAG);
    EXPECT_EQ(r.type, ptype::kL3Ipv6 | ptype::kL4Udp | ptype::kParsed);
}

TEST(ParseHeaders, Ipv6AtomicFragmentIsAWholeDatagram) {
    const ParseResult r = parse_copy(ipv6_fragment(0, false, udp(4000, 4789, 8)));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT | RTE_PTYPE_L4_UDP);
}

Bytes ipv4_fragment(uint16_t offset_units, bool more, const Bytes& data, uint32_t src = kIpA,
                    uint32_t dst = kIpB) {
    Ipv4Fields f;
    f.src = src;
    f.dst = dst;
    f.flags_offset = static_cast<uint16_t>((more ? 0x2000 : 0) | offset_units);
    return ethernet(kEtherIpv4, ipv4(kUdp, data, f));
}

TEST(ParseHeaders, Ipv4NonFirstFragmentHasNoL4Header) {
    // Bytes that would be a TCP header with a bad offset must not be read as one.
    const ParseResult r = parse_copy(ipv4_fragment(100, true, Bytes(40, 0x00)));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l3_len, 20);
    EXPECT_EQ(r.l4_len, 0);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_FRAG);
    EXPECT_EQ(r.type, ptype::kL3Ipv4 | ptype::kL4Frag | ptype::kParsed);
}

TEST(ParseHeaders, Ipv4FirstFragmentKeepsItsL4HeaderButIsTypedFragment) {
    const ParseResult r = parse_copy(ipv4_fragment(0, true, udp(4000, 53, 64)));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l4_len, 8);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_FRAG);
    EXPECT_EQ(r.type, ptype::kL3Ipv4 | ptype::kL4Udp | ptype::kParsed);
}

TEST(ParseHeaders, SingleVlanTagIsInsideL2LenAndFlagged) {
    const ParseResult r =
        parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2)), {{0x8100, 100}}));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l2_len, 18);
    EXPECT_EQ(r.vlan_tags, 1);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER_VLAN | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP);
    EXPECT_EQ(r.type, ptype::kVlan | ptype::kL3Ipv4 | ptype::kL4Tcp | ptype::kParsed);
}

TEST(ParseHeaders, QinqTagsOfEveryTpidAreSkipped) {
    for (uint16_t outer : {0x88a8, 0x9100}) {
        const ParseResult r = parse_copy(
            ethernet(kEtherIpv6, ipv6(kUdp, udp(1, 2)), {{outer, 10}, {0x8100, 20}}));
        EXPECT_FALSE(r.malformed()) << std::hex << outer;
        EXPECT_EQ(r.l2_len, 22);
        EXPECT_EQ(r.vlan_tags, 2);
        EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER_QINQ | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_UDP);
        EXPECT_EQ(r.type, ptype::kVlan | ptype::kL3Ipv6 | ptype::kL4Udp | ptype::kParsed);
    }
    const ParseResult triple = parse_copy(ethernet(
        kEtherIpv4, ipv4(kUdp, udp(1, 2)), {{0x88a8, 1}, {0x8100, 2}, {0x8100, 3}}));
    EXPECT_FALSE(triple.malformed());
    EXPECT_EQ(triple.l2_len, 26);
}

TEST(ParseHeaders, MoreVlanTagsThanTheLimitAreMalformed) {
    std::vector<Tag> tags(kMaxVlanTags + 1, Tag{0x8100, 1});
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kUdp, udp(1, 2)), tags));
    EXPECT_EQ(r.error, ParseError::TooManyVlanTags);
    EXPECT_EQ(r.packet_type, 0u);
    EXPECT_EQ(r.l2_len, 0);
    EXPECT_TRUE(r.type & ptype::kMalformed);
}

TEST(ParseHeaders, ArpIsNonIpAndHashedByItsMacAddresses) {
    const ParseResult r = parse_copy(ethernet(kEtherArp, arp()));
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l2_len, 14);
    EXPECT_EQ(r.l3_len, 0);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER_ARP);
    EXPECT_EQ(r.type, ptype::kL3Other | ptype::kParsed);
    const ParseResult reply = parse_copy(ethernet(kEtherArp, arp(), {}, kMacA, kMacB));
    EXPECT_EQ(r.flow_hash, reply.flow_hash);
}

TEST(ParseHeaders, EthernetPaddingAfterAShortDatagramIsNotMalformed) {
    Bytes frame = ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2)));
    frame.resize(60, 0);  // minimum frame: 6 bytes of padding after the datagram
    const ParseResult r = parse_copy(frame);
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l4_len, 20);
}

// ---- malformed packets ----------------------------------------------------------------------

TEST(ParseHeaders, TcpDataOffsetBelowFiveIsABadOffset) {
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 4, 20))));
    EXPECT_EQ(r.error, ParseError::BadTcpOffset);
    EXPECT_EQ(r.type, ptype::kL3Ipv4 | ptype::kL4Tcp | ptype::kParsed | ptype::kMalformed);
    // The IP header is sound and stays described; the TCP header is not.
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4);
    EXPECT_EQ(r.l3_len, 20);
    EXPECT_EQ(r.l4_len, 0);
}

TEST(ParseHeaders, TcpDataOffsetPastTheDatagramIsABadOffset) {
    Bytes segment = tcp(1, 2, 5, 0);
    segment[12] = 0xf0;  // 60 bytes claimed, 20 in the datagram
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, segment)));
    EXPECT_EQ(r.error, ParseError::BadTcpOffset);
}

TEST(ParseHeaders, Ipv4IhlBelowFiveIsABadHeader) {
    Ipv4Fields f;
    f.ihl = 4;
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2), f)));
    EXPECT_EQ(r.error, ParseError::BadIpv4Header);
    EXPECT_EQ(r.type, ptype::kL3Ipv4 | ptype::kParsed | ptype::kMalformed);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER);
    EXPECT_EQ(r.l2_len, 14);
    EXPECT_EQ(r.l3_len, 0);
    EXPECT_NE(r.flow_hash, 0u);  // still spread, by MAC addresses
}

TEST(ParseHeaders, Ipv4TotalLengthBelowItsHeaderIsABadHeader) {
    Ipv4Fields f;
    f.total_override = 19;
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2), f)));
    EXPECT_EQ(r.error, ParseError::BadIpv4Header);
}

TEST(ParseHeaders, Ipv4WrongVersionIsABadHeader) {
    Ipv4Fields f;
    f.version = 6;
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2), f)));
    EXPECT_EQ(r.error, ParseError::BadIpv4Header);
}

TEST(ParseHeaders, Ipv4TotalLengthPastTheFrameIsATruncatedPayload) {
    Ipv4Fields f;
    f.total_override = 1500;
    const ParseResult r = parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 5, 10), f)));
    EXPECT_EQ(r.error, ParseError::TruncatedIpPayload);
    // Every header is whole, so all of them are described.
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP);
    EXPECT_EQ(r.l4_len, 20);
}

TEST(ParseHeaders, PayloadInLaterSegmentsIsNotATruncation) {
    const Bytes frame = ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 5, 400)));
    const uint32_t first_segment = 14 + 20 + 20 + 10;
    const ParseResult whole =
        parse_headers(frame.data(), first_segment, static_cast<uint32_t>(frame.size()));
    EXPECT_FALSE(whole.malformed());
    const ParseResult cut =
        parse_headers(frame.data(), 14 + 20 + 10, static_cast<uint32_t>(frame.size()));
    EXPECT_EQ(cut.error, ParseError::TruncatedL4);  // headers must sit in the first segment
}

TEST(ParseHeaders, HopByHopAfterAnotherExtensionHeaderIsOutOfOrder) {
    Bytes rest = option_header(kHopByHop, 8);  // destination options, then hop-by-hop
    put(rest, option_header(kTcp, 8));
    put(rest, tcp(1, 2));
    const ParseResult r = parse_copy(ethernet(kEtherIpv6, ipv6(kDestOpts, rest)));
    EXPECT_EQ(r.error, ParseError::BadIpv6ExtOrder);
    EXPECT_EQ(r.packet_type, RTE_PTYPE_L2_ETHER);
    EXPECT_EQ(r.l3_len, 0);
}

TEST(ParseHeaders, LongerExtensionChainsThanTheLimitAreMalformed) {
    Bytes rest;
    for (unsigned i = 0; i < kMaxIpv6ExtHeaders + 1; ++i)
        put(rest, option_header(i == kMaxIpv6ExtHeaders ? kTcp : kDestOpts, 8));
    put(rest, tcp(1, 2));
    const ParseResult r = parse_copy(ethernet(kEtherIpv6, ipv6(kDestOpts, rest)));
    EXPECT_EQ(r.error, ParseError::Ipv6ExtLimit);
}

TEST(ParseHeaders, ExtensionChainsLongerThanL3LenCanHoldAreMalformed) {
    Bytes rest = option_header(kTcp, 512);  // 40 + 512 bytes: past mbuf l3_len's 9 bits
    put(rest, tcp(1, 2));
    const ParseResult r = parse_copy(ethernet(kEtherIpv6, ipv6(kDestOpts, rest)));
    EXPECT_EQ(r.error, ParseError::Ipv6ExtLimit);
}

TEST(ParseHeaders, Ipv6WrongVersionIsABadHeader) {
    Bytes frame = ethernet(kEtherIpv6, ipv6(kTcp, tcp(1, 2)));
    frame[14] = 0x40;
    EXPECT_EQ(parse_copy(frame).error, ParseError::BadIpv6Header);
}

TEST(ParseHeaders, Ipv6JumbogramTakesItsLengthFromTheFrame) {
    Bytes rest = option_header(kTcp, 8);
    rest[2] = 0xc2;  // Jumbo Payload option, its length field left as is
    rest[3] = 4;
    put(rest, tcp(1, 2, 5, 100));
    Bytes frame = ethernet(kEtherIpv6, ipv6(kHopByHop, rest));
    frame[14 + 4] = 0;  // payload length 0: a jumbogram
    frame[14 + 5] = 0;
    const ParseResult r = parse_copy(frame);
    EXPECT_FALSE(r.malformed());
    EXPECT_EQ(r.l3_len, 48);
    EXPECT_EQ(r.l4_len, 20);
}

// ---- symmetric flow hash --------------------------------------------------------------------

TEST(FlowHash, ReversedFiveTupleHashesTheSame) {
    const Bytes v4 = ethernet(kEtherIpv4, ipv4(kTcp, tcp(40000, 443)));
    Ipv4Fields back;
    back.src = kIpB;
    back.dst = kIpA;
    const Bytes v4_back = ethernet(kEtherIpv4, ipv4(kTcp, tcp(443, 40000), back), {}, kMacA, kMacB);
    EXPECT_EQ(parse_copy(v4).flow_hash, parse_copy(v4_back).flow_hash);

    const Bytes v6 = ethernet(kEtherIpv6, ipv6(kUdp, udp(5000, 53), kIp6A, kIp6B));
    const Bytes v6_back = ethernet(kEtherIpv6, ipv6(kUdp, udp(53, 5000), kIp6B, kIp6A));
    EXPECT_EQ(parse_copy(v6).flow_hash, parse_copy(v6_back).flow_hash);
}

TEST(FlowHash, SameAddressesDifferentPortsAreDifferentFlows) {
    // Same addresses both ways round: the ports alone must order the endpoints.
    Ipv4Fields same;
    same.src = same.dst = kIpA;
    auto hash = [&](uint16_t sport, uint16_t dport) {
        return parse_copy(ethernet(kEtherIpv4, ipv4(kUdp, udp(sport, dport), same))).flow_hash;
    };
    const uint32_t ab = hash(1000, 2000);
    const uint32_t ba = hash(2000, 1000);
    const uint32_t other = hash(1000, 2001);
    EXPECT_EQ(ab, ba);
    EXPECT_NE(ab, other);
}

TEST(FlowHash, DistinctFlowsSpreadOverDistinctValuesAndLowBits) {
    std::set<uint32_t> hashes;
    std::array<unsigned, 8> buckets{};
    for (uint16_t port = 1; port <= 4096; ++port) {
        const uint32_t h =
            parse_copy(ethernet(kEtherIpv4, ipv4(kTcp, tcp(port, 80)))).flow_hash;
        hashes.insert(h);
        ++buckets[h % buckets.size()];
    }
    EXPECT_GE(hashes.size(), 4090u);
    for (unsigned n : buckets) EXPECT_NEAR(n, 512, 128);  // dispatch by hash % workers is fair
}

TEST(FlowHash, EveryFragmentOfADatagramSharesOneFlow) {
    const uint32_t first = parse_copy(ipv4_fragment(0, true, udp(4000, 53, 64))).flow_hash;
    const uint32_t middle = parse_copy(ipv4_fragment(9, true, payload(72))).flow_hash;
    const uint32_t last_back =
        parse_copy(ipv4_fragment(18, false, payload(20), kIpB, kIpA)).flow_hash;
    EXPECT_EQ(first, middle);
    EXPECT_EQ(first, last_back);

    const uint32_t first6 = parse_copy(ipv6_fragment(0, true, udp(4000, 53, 64))).flow_hash;
    const uint32_t later6 = parse_copy(ipv6_fragment(9, false, payload(8))).flow_hash;
    const uint32_t later6_back =
        parse_copy(ipv6_fragment(9, false, payload(8), kIp6B, kIp6A)).flow_hash;
    EXPECT_EQ(first6, later6);
    EXPECT_EQ(first6, later6_back);
}

// ---- every truncation point -----------------------------------------------------------------

// A crafted packet and where its headers end: a cut before `end` of a header (and past the
// previous one) is reported as `reason`. Past the last header, an IP packet's payload is short.
struct Layer {
    size_t end;
    ParseError reason;
};
struct Specimen {
    std::string name;
    Bytes frame;
    std::vector<Layer> layers;
    bool ip = true;
};

std::vector<Specimen> well_formed_specimens() {
    using E = ParseError;
    std::vector<Specimen> s;
    s.push_back({"ipv4_tcp_options", ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 8, 5))),
                 {{14, E::TruncatedL2}, {34, E::TruncatedIpv4}, {66, E::TruncatedL4}}});
    Ipv4Fields opts;
    opts.ihl = 15;
    s.push_back({"ipv4_max_options_udp", ethernet(kEtherIpv4, ipv4(kUdp, udp(1, 2, 3), opts)),
                 {{14, E::TruncatedL2}, {74, E::TruncatedIpv4}, {82, E::TruncatedL4}}});
    s.push_back({"ipv4_icmp", ethernet(kEtherIpv4, ipv4(kIcmp, icmp_echo(8, 4))),
                 {{14, E::TruncatedL2}, {34, E::TruncatedIpv4}, {42, E::TruncatedL4}}});
    s.push_back({"ipv4_non_first_fragment", ipv4_fragment(10, false, payload(24)),
                 {{14, E::TruncatedL2}, {34, E::TruncatedIpv4}}});
    s.push_back({"ipv6_tcp", ethernet(kEtherIpv6, ipv6(kTcp, tcp(1, 2, 5, 3))),
                 {{14, E::TruncatedL2}, {54, E::TruncatedIpv6}, {74, E::TruncatedL4}}});
    s.push_back({"ipv6_extension_chain", ipv6_extension_chain_tcp(),
                 {{14, E::TruncatedL2},
                  {54, E::TruncatedIpv6},
                  {54 + 72, E::TruncatedIpv6Ext},
                  {54 + 72 + 24, E::TruncatedL4}}});
    s.push_back({"ipv6_first_fragment", ipv6_fragment(0, true, udp(1, 2, 16)),
                 {{14, E::TruncatedL2}, {54, E::TruncatedIpv6}, {62, E::TruncatedIpv6Ext},
                  {70, E::TruncatedL4}}});
    s.push_back({"ipv6_non_first_fragment", ipv6_fragment(3, true, payload(16)),
                 {{14, E::TruncatedL2}, {54, E::TruncatedIpv6}, {62, E::TruncatedIpv6Ext}}});
    s.push_back({"ipv6_icmpv6", ethernet(kEtherIpv6, ipv6(kIcmpv6, icmp_echo(128, 4))),
                 {{14, E::TruncatedL2}, {54, E::TruncatedIpv6}, {62, E::TruncatedL4}}});
    s.push_back({"vlan_ipv4_udp", ethernet(kEtherIpv4, ipv4(kUdp, udp(1, 2, 2)), {{0x8100, 7}}),
                 {{14, E::TruncatedL2}, {18, E::TruncatedVlan}, {38, E::TruncatedIpv4},
                  {46, E::TruncatedL4}}});
    s.push_back({"qinq_ipv6_tcp",
                 ethernet(kEtherIpv6, ipv6(kTcp, tcp(1, 2)), {{0x88a8, 7}, {0x8100, 8}}),
                 {{14, E::TruncatedL2}, {22, E::TruncatedVlan}, {62, E::TruncatedIpv6},
                  {82, E::TruncatedL4}}});
    s.push_back({"arp", ethernet(kEtherArp, arp()), {{14, E::TruncatedL2}}, false});
    return s;
}

ParseError expected_reason(const Specimen& s, size_t cut) {
    for (const Layer& l : s.layers)
        if (cut < l.end) return l.reason;
    if (cut == s.frame.size() || !s.ip) return ParseError::None;
    return ParseError::TruncatedIpPayload;
}

// Whatever the bytes, described headers lie inside what could be read.
void expect_described_headers_fit(const ParseResult& r, size_t len) {
    EXPECT_LE(size_t(r.l2_len) + r.l3_len + r.l4_len, len);
    EXPECT_TRUE(r.type & ptype::kParsed);
    EXPECT_EQ(r.malformed(), (r.type & ptype::kMalformed) != 0);
}

TEST(Truncation, EveryCutOfAWellFormedPacketIsReportedWithTheHeaderItFallsIn) {
    for (const Specimen& s : well_formed_specimens()) {
        ASSERT_EQ(expected_reason(s, s.frame.size()), ParseError::None) << s.name;
        for (size_t cut = 0; cut <= s.frame.size(); ++cut) {
            const ParseResult r = parse_copy(s.frame, cut);
            const std::string expected = parse_error_name(expected_reason(s, cut));
            EXPECT_EQ(parse_error_name(r.error), expected)
                << s.name << " cut at " << cut << " of " << s.frame.size();
            expect_described_headers_fit(r, cut);
        }
    }
}

std::vector<Bytes> malformed_specimens() {
    std::vector<Bytes> m;
    m.push_back(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 4, 20))));
    Ipv4Fields ihl4;
    ihl4.ihl = 4;
    m.push_back(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2), ihl4)));
    Ipv4Fields short_total;
    short_total.total_override = 10;
    m.push_back(ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2), short_total)));
    std::vector<Tag> tags(kMaxVlanTags + 1, Tag{0x88a8, 1});
    m.push_back(ethernet(kEtherIpv4, ipv4(kUdp, udp(1, 2)), tags));
    Bytes segment = tcp(1, 2);
    segment[12] = 0xf0;
    m.push_back(ethernet(kEtherIpv6, ipv6(kTcp, segment)));
    return m;
}

TEST(Truncation, EveryCutOfAMalformedPacketStaysMalformedAndInBounds) {
    for (const Bytes& frame : malformed_specimens()) {
        for (size_t cut = 0; cut <= frame.size(); ++cut) {
            const ParseResult r = parse_copy(frame, cut);
            EXPECT_TRUE(r.malformed()) << "cut at " << cut;
            expect_described_headers_fit(r, cut);
        }
    }
}

TEST(Truncation, RandomlyCorruptedPacketsNeverReadOutOfBounds) {
    std::mt19937 rng(20240601);
    std::vector<Bytes> seeds = malformed_specimens();
    for (const Specimen& s : well_formed_specimens()) seeds.push_back(s.frame);
    for (int round = 0; round < 3000; ++round) {
        Bytes frame = seeds[rng() % seeds.size()];
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) frame[rng() % frame.size()] = static_cast<uint8_t>(rng());
        const size_t cut = rng() % (frame.size() + 1);
        expect_described_headers_fit(parse_copy(frame, cut), cut);
    }
}

// ---- the stage on mbufs ---------------------------------------------------------------------

std::unique_ptr<Stage> make_parse_stage(bool drop_malformed) {
    const StageInfo* info = StageRegistry::instance().find("parse");
    if (info == nullptr) return nullptr;
    ParamValues values;
    for (const ParamSpec& spec : info->params) {
        if (spec.name == "drop_malformed")
            values.set(spec, drop_malformed ? "true" : "false", Location{"parse_test", 0, 0});
        else
            values.set_default(spec);
    }
    return info->create(values);
}

rte_mbuf* mbuf_with(MbufPool& pool, const Bytes& frame) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
    if (m == nullptr) return nullptr;
    if (!frame.empty()) {
        char* dst = rte_pktmbuf_append(m, static_cast<uint16_t>(frame.size()));
        std::memcpy(dst, frame.data(), frame.size());
    }
    return m;
}

void push(Burst& b, rte_mbuf* m) {
    b.d[b.n++] = PacketDesc{m, 0, saturate_length(rte_pktmbuf_pkt_len(m)), 0, 0};
}

uint64_t event_count(const Stage& s, const std::string& name) {
    const auto& names = s.events();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return ~uint64_t{0};
    return s.stats().event[static_cast<size_t>(it - names.begin())].get();
}

// A burst with one packet of each kind: good, bad-offset TCP, empty, IHL 4, good IPv6.
std::vector<Bytes> mixed_burst_frames() {
    Ipv4Fields ihl4;
    ihl4.ihl = 4;
    return {ethernet(kEtherIpv4, ipv4(kTcp, tcp(40000, 443))),
            ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 3))),
            Bytes{},
            ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2), ihl4)),
            ethernet(kEtherIpv6, ipv6(kUdp, udp(5000, 53)), {{0x8100, 5}})};
}

TEST(ParseStage, IsRegisteredAsAProcessorWithADocumentedParameter) {
    const StageInfo* info = StageRegistry::instance().find("parse");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    EXPECT_FALSE(info->description.empty());
    const ParamSpec* p = info->find_param("drop_malformed");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->type, ParamType::Bool);
    EXPECT_EQ(p->default_text, "false");
    EXPECT_FALSE(p->help.empty());
}

TEST(ParseStage, FillsMbufsAndDescriptorsAndPassesMalformedPacketsOnCounted) {
    MbufPool pool(MbufPoolSpec{"parse_test_pass", 63, 0, 2048, -1});
    auto stage = make_parse_stage(false);
    ASSERT_NE(stage, nullptr);
    Burst b;
    for (const Bytes& f : mixed_burst_frames()) push(b, mbuf_with(pool, f));

    stage->process(b);

    ASSERT_EQ(b.n, 5);  // malformed packets go on, marked
    const rte_mbuf* good = b.d[0].mbuf;
    EXPECT_EQ(good->l2_len, 14u);
    EXPECT_EQ(good->l3_len, 20u);
    EXPECT_EQ(good->l4_len, 20u);
    EXPECT_EQ(good->packet_type, RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP);
    EXPECT_EQ(b.d[0].type, ptype::kL3Ipv4 | ptype::kL4Tcp | ptype::kParsed);
    EXPECT_NE(b.d[0].flow_hash, 0u);
    EXPECT_TRUE(b.d[1].type & ptype::kMalformed);
    EXPECT_TRUE(b.d[2].type & ptype::kMalformed);
    EXPECT_TRUE(b.d[3].type & ptype::kMalformed);
    EXPECT_EQ(b.d[4].type, ptype::kVlan | ptype::kL3Ipv6 | ptype::kL4Udp | ptype::kParsed);
    EXPECT_EQ(b.d[4].mbuf->l2_len, 18u);

    EXPECT_EQ(event_count(*stage, "bad_tcp_offset"), 1u);
    EXPECT_EQ(event_count(*stage, "truncated_l2"), 1u);
    EXPECT_EQ(event_count(*stage, "bad_ipv4_header"), 1u);
    EXPECT_EQ(event_count(*stage, "truncated_l4"), 0u);
    EXPECT_EQ(stage->stats().drops.get(), 0u);

    for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST(ParseStage, DropMalformedDropsAndFreesThemKeepingOrder) {
    MbufPool pool(MbufPoolSpec{"parse_test_drop", 63, 0, 2048, -1});
    auto stage = make_parse_stage(true);
    ASSERT_NE(stage, nullptr);
    Burst b;
    for (const Bytes& f : mixed_burst_frames()) push(b, mbuf_with(pool, f));
    rte_mbuf* first = b.d[0].mbuf;
    rte_mbuf* last = b.d[4].mbuf;

    stage->process(b);

    ASSERT_EQ(b.n, 2);
    EXPECT_EQ(b.d[0].mbuf, first);
    EXPECT_EQ(b.d[1].mbuf, last);
    const auto& reasons = stage->drop_reasons();
    const auto malformed = std::find(reasons.begin(), reasons.end(), "malformed");
    ASSERT_NE(malformed, reasons.end());
    EXPECT_EQ(stage->stats().reason[static_cast<size_t>(malformed - reasons.begin())].get(), 3u);
    EXPECT_EQ(stage->stats().drops.get(), 3u);
    EXPECT_EQ(event_count(*stage, "bad_tcp_offset"), 1u);  // the reason is still counted
    EXPECT_EQ(pool.available(), pool.capacity() - 2);      // the dropped three are back

    for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST(ParseStage, HeadersSplitAcrossSegmentsAreTruncatedWithoutReadingTheSecond) {
    MbufPool pool(MbufPoolSpec{"parse_test_segments", 63, 0, 2048, -1});
    auto stage = make_parse_stage(false);
    ASSERT_NE(stage, nullptr);
    const Bytes frame = ethernet(kEtherIpv4, ipv4(kTcp, tcp(1, 2, 5, 100)));
    auto chained = [&](size_t split) {
        rte_mbuf* head = mbuf_with(pool, Bytes(frame.begin(), frame.begin() + long(split)));
        rte_mbuf* tail = mbuf_with(pool, Bytes(frame.begin() + long(split), frame.end()));
        EXPECT_EQ(rte_pktmbuf_chain(head, tail), 0);
        return head;
    };
    Burst b;
    push(b, chained(14 + 20 + 10));   // TCP header split
    push(b, chained(14 + 20 + 20));   // headers whole in the first segment

    stage->process(b);

    ASSERT_EQ(b.n, 2);
    EXPECT_TRUE(b.d[0].type & ptype::kMalformed);
    EXPECT_EQ(event_count(*stage, "truncated_l4"), 1u);
    EXPECT_FALSE(b.d[1].type & ptype::kMalformed);
    EXPECT_EQ(b.d[1].mbuf->l4_len, 20u);
    for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    EXPECT_EQ(pool.available(), pool.capacity());
}

}  // namespace
}  // namespace tp
