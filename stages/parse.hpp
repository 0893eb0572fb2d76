// parse: finds the headers of each packet once, so later stages and dispatch need not.
//
// Understands Ethernet, stacked 802.1Q / 802.1ad VLAN tags (TPIDs 0x8100, 0x88a8, 0x9100, at
// most kMaxVlanTags), IPv4 with options, IPv6 with its extension headers (hop-by-hop, routing,
// fragment, destination options, AH; ESP and "no next header" end the chain), and TCP, UDP,
// SCTP, ICMP and ICMPv6 above them.
//
// Promises, per packet:
//   - Never reads past the first segment's data_len, nor past the IP datagram; a header that
//     would cross either is "truncated". Any length, 0 included, is safe.
//   - mbuf l2_len / l3_len / l4_len and packet_type (RTE_PTYPE_*) describe only headers that
//     are whole and consistent, so DPDK code trusting them stays in bounds. l3_len covers IPv4
//     options and IPv6 extension headers. Every fragment carries RTE_PTYPE_L4_FRAG as DPDK's
//     own parser does; a first fragment still gets its L4 header parsed and l4_len set.
//   - PacketDesc::type gets ptype:: bits for what the packet says it is (kL3Ipv4 even when the
//     IPv4 header turns out bad), plus kParsed always and kMalformed when something was wrong.
//     kL4Frag marks a non-first fragment, which has no L4 header.
//   - PacketDesc::flow_hash is symmetric (A->B equals B->A): the 5-tuple when ports are known,
//     addresses and protocol for fragments (so all fragments of a datagram, first included,
//     agree) and for port-less protocols, the two MAC addresses and EtherType for non-IP. It
//     spreads load; it is not keyed and must never be a security boundary.
//   - A malformed packet is counted under one reason (an event: see ParseError) and passed on
//     marked kMalformed, or dropped under "malformed" when drop_malformed is set.
//
// One tile runs an instance at a time (Stage rules); parse_headers() is pure and thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "descriptors/packet_desc.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

// Why a packet is malformed; the first problem found wins, and a header cut short is named
// before a datagram whose payload merely ends early.
enum class ParseError : uint8_t {
    None = 0,
    TruncatedL2,         // shorter than an Ethernet header
    TruncatedVlan,       // a VLAN tag cut short
    TooManyVlanTags,     // more than kMaxVlanTags stacked tags
    TruncatedIpv4,       // IPv4 header (with its options) cut short
    BadIpv4Header,       // version != 4, IHL < 5, or total length < header length
    TruncatedIpv6,       // fixed IPv6 header cut short
    BadIpv6Header,       // version != 6
    TruncatedIpv6Ext,    // an extension header cut short
    BadIpv6ExtOrder,     // hop-by-hop options anywhere but first
    Ipv6ExtLimit,        // more than kMaxIpv6ExtHeaders, or longer than l3_len can hold
    TruncatedL4,         // TCP/UDP/SCTP/ICMP header cut short (also a too-small first fragment)
    BadTcpOffset,        // TCP data offset < 5, or beyond the IP datagram
    TruncatedIpPayload,  // headers whole, but the IP length claims more bytes than the frame has
};
inline constexpr size_t kParseErrorCount = 14;  // including None

// The event name `tilepipe` reports for a reason, e.g. "truncated_ipv4"; "" for None.
const char* parse_error_name(ParseError e);

inline constexpr unsigned kMaxVlanTags = 8;        // real networks stack 1-3
inline constexpr unsigned kMaxIpv6ExtHeaders = 8;  // real traffic carries 0-3

struct ParseResult {
    uint32_t packet_type = 0;  // RTE_PTYPE_* of the whole, consistent headers
    uint32_t flow_hash = 0;    // symmetric; 0 when not even Ethernet was whole
    uint16_t l2_len = 0;       // Ethernet + VLAN tags (fits mbuf l2_len: 7 bits)
    uint16_t l3_len = 0;       // IP header + options / extension headers (fits 9 bits)
    uint16_t l4_len = 0;       // TCP with options, UDP 8, ICMP/ICMPv6 8, SCTP 12 (fits 8 bits)
    uint8_t type = ptype::kParsed;  // ptype:: bits for PacketDesc::type
    uint8_t vlan_tags = 0;
    ParseError error = ParseError::None;

    bool malformed() const { return error != ParseError::None; }
};

// Parses the headers at `data`. `len` bytes may be read (the first segment); `frame_len` is
// the whole frame (all segments), used only to judge whether the IP payload is all there.
ParseResult parse_headers(const uint8_t* data, uint32_t len, uint32_t frame_len);

// For a contiguous frame: all `len` bytes are the whole frame.
inline ParseResult parse_headers(const uint8_t* data, uint32_t len) {
    return parse_headers(data, len, len);
}

class Parse final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 1.5;  // reads every header and writes the metadata

    explicit Parse(const ParamValues& p);
    void process(Burst& b) override;

private:
    bool drop_malformed_;
    uint16_t malformed_drop_;                           // drop reason index
    std::array<uint16_t, kParseErrorCount> event_of_{};  // event index per ParseError
};

}  // namespace tp
