#include "stages/parse.hpp"

#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "descriptors/wire_format.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {

using namespace wire;



constexpr uint32_t kPortBytes = 4;  // source and destination port lead TCP, UDP and SCTP
constexpr uint32_t kMaxL3Len = (1u << RTE_MBUF_L3_LEN_BITS) - 1;

static_assert(kEtherHeader + kMaxVlanTags * kVlanTag < (1u << RTE_MBUF_L2_LEN_BITS),
              "l2_len must hold the deepest VLAN stack we accept");
static_assert(kParseErrorCount - 1 <= StageStats::kMaxReasons, "one event per reason");


// ---- flow hash ------------------------------------------------------------------------------
//
// Symmetry comes from ordering the two endpoints before hashing, not from XOR-ing them (which
// would send every A->A flow to one value). CRC32-C costs one instruction per 8 bytes but is
// linear, so a final avalanche spreads every input bit over the low bits dispatch uses.

constexpr uint32_t kHashSeed = 0x9e3779b9;

inline uint32_t avalanche(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

struct Ports {
    uint16_t src = 0;
    uint16_t dst = 0;
};

uint32_t hash_macs(const uint8_t* eth, uint16_t ether_type) {
    uint64_t a = be48(eth);
    uint64_t b = be48(eth + 6);
    if (a > b) std::swap(a, b);
    uint32_t h = rte_hash_crc_8byte(a, kHashSeed);
    h = rte_hash_crc_8byte(b | uint64_t(ether_type) << 48, h);
    return avalanche(h);
}

uint32_t hash_ports_proto(uint32_t h, uint16_t pa, uint16_t pb, uint8_t proto) {
    return avalanche(rte_hash_crc_8byte(uint64_t(pa) << 32 | uint64_t(pb) << 16 | proto, h));
}

uint32_t hash_ipv4(const uint8_t* ip, uint8_t proto, Ports p) {
    uint32_t a = be32(ip + 12);
    uint32_t b = be32(ip + 16);
    if (a > b || (a == b && p.src > p.dst)) {
        std::swap(a, b);
        std::swap(p.src, p.dst);
    }
    return hash_ports_proto(rte_hash_crc_8byte(uint64_t(a) << 32 | b, kHashSeed), p.src, p.dst,
                            proto);
}

uint32_t hash_ipv6(const uint8_t* ip, uint8_t proto, Ports p) {
    const uint8_t* a = ip + 8;
    const uint8_t* b = ip + 24;
    const int order = std::memcmp(a, b, 16);
    if (order > 0 || (order == 0 && p.src > p.dst)) {
        std::swap(a, b);
        std::swap(p.src, p.dst);
    }
    uint64_t w[4];
    std::memcpy(w, a, 16);
    std::memcpy(w + 2, b, 16);
    uint32_t h = kHashSeed;
    for (uint64_t x : w) h = rte_hash_crc_8byte(x, h);
    return hash_ports_proto(h, p.src, p.dst, proto);
}

// ---- header walk ----------------------------------------------------------------------------

void fail(ParseResult& r, ParseError e) {
    r.error = e;
    r.type |= ptype::kMalformed;
}

// For an L3 header that cannot be trusted: the caller falls back to hashing MAC addresses.
bool reject_l3(ParseResult& r, ParseError e) {
    fail(r, e);
    return false;
}

// What a transport header looks like to the parser.
struct L4Shape {
    uint32_t min_len;      // bytes that must be there (TCP: before its data offset)
    uint32_t rte_ptype;    // RTE_PTYPE_L4_* when not a fragment
    uint8_t bits;          // ptype::kL4*
    bool has_ports;
};

L4Shape l4_shape(uint8_t proto, bool ipv6) {
    switch (proto) {
        case kProtoTcp: return {kTcpMinHeader, RTE_PTYPE_L4_TCP, ptype::kL4Tcp, true};
        case kProtoUdp: return {8, RTE_PTYPE_L4_UDP, ptype::kL4Udp, true};
        case kProtoSctp: return {12, RTE_PTYPE_L4_SCTP, ptype::kL4Other, true};
        case kProtoIcmp:
            if (!ipv6) return {8, RTE_PTYPE_L4_ICMP, ptype::kL4Icmp, false};
            break;
        case kProtoIcmpv6:
            // Every ICMPv6 message has 4 bytes of body after type, code and checksum.
            if (ipv6) return {8, RTE_PTYPE_L4_ICMP, ptype::kL4Icmp, false};
            break;
        case kProtoNoNext:
            if (ipv6) return {0, 0, ptype::kL4None, false};
            break;
        default: break;
    }
    // GRE, ESP, IGMP, ...: known to be there, not parsed.
    return {0, RTE_PTYPE_L4_NONFRAG, ptype::kL4Other, false};
}

// Parses the transport header at `l4`: `readable` bytes may be read, `claimed` is what the IP
// header says the transport part spans. Returns the ports when their bytes are there, even if
// the rest of the header is not, so a damaged packet still hashes with its flow.
Ports parse_l4(ParseResult& r, uint8_t proto, bool ipv6, const uint8_t* l4, uint32_t readable,
               uint32_t claimed, bool fragment) {
    const L4Shape s = l4_shape(proto, ipv6);
    r.type |= s.bits;
    Ports ports;
    if (s.has_ports && readable >= kPortBytes) ports = {be16(l4), be16(l4 + 2)};
    if (readable < s.min_len) {
        fail(r, ParseError::TruncatedL4);
        return ports;
    }
    uint32_t len = s.min_len;
    if (proto == kProtoTcp) {
        len = (l4[12] >> 4) * 4u;
        // An offset past what the IP header claims is a lie; past what we hold, a cut.
        if (len < kTcpMinHeader || len > claimed) {
            fail(r, ParseError::BadTcpOffset);
            return ports;
        }
        if (len > readable) {
            fail(r, ParseError::TruncatedL4);
            return ports;
        }
    }
    r.l4_len = static_cast<uint16_t>(len);
    r.packet_type |= fragment ? RTE_PTYPE_L4_FRAG : s.rte_ptype;
    return ports;
}

void mark_non_first_fragment(ParseResult& r) {
    r.type |= ptype::kL4Frag;
    r.packet_type |= RTE_PTYPE_L4_FRAG;
}

// `readable`: bytes from `ip` to the end of the first segment; `in_frame`: to the end of the
// frame. Returns whether it set the flow hash (false: the header is not trustworthy).
bool parse_ipv4(ParseResult& r, const uint8_t* ip, uint32_t readable, uint32_t in_frame) {
    r.type |= ptype::kL3Ipv4;
    if (readable < kIpv4MinHeader) return reject_l3(r, ParseError::TruncatedIpv4);
    const uint32_t ihl = (ip[0] & 0x0fu) * 4;
    if ((ip[0] >> 4) != 4 || ihl < kIpv4MinHeader) return reject_l3(r, ParseError::BadIpv4Header);
    if (readable < ihl) return reject_l3(r, ParseError::TruncatedIpv4);
    const uint32_t total = be16(ip + 2);
    if (total < ihl) return reject_l3(r, ParseError::BadIpv4Header);

    r.l3_len = static_cast<uint16_t>(ihl);
    r.packet_type |= ihl == kIpv4MinHeader ? RTE_PTYPE_L3_IPV4 : RTE_PTYPE_L3_IPV4_EXT;

    const uint16_t frag = be16(ip + 6);
    const bool fragment = (frag & 0x3fff) != 0;  // more-fragments flag or a non-zero offset
    const bool first = (frag & 0x1fff) == 0;
    const uint8_t proto = ip[9];
    Ports ports;
    if (fragment && !first) {
        mark_non_first_fragment(r);
    } else {
        // Ethernet padding after a short datagram is not transport payload: stop at `total`.
        const uint32_t limit = std::min(total, readable);
        ports = parse_l4(r, proto, false, ip + ihl, limit - ihl, total - ihl, fragment);
    }
    r.flow_hash = hash_ipv4(ip, proto, fragment ? Ports{} : ports);
    if (!r.malformed() && total > in_frame) fail(r, ParseError::TruncatedIpPayload);
    return true;
}

bool is_ipv6_option_header(uint8_t next) {
    return next == kProtoHopByHop || next == kProtoRouting || next == kProtoDestOpts ||
           next == kProtoAh;
}

// Same contract as parse_ipv4.
bool parse_ipv6(ParseResult& r, const uint8_t* ip, uint32_t readable, uint32_t in_frame) {
    r.type |= ptype::kL3Ipv6;
    if (readable < kIpv6Header) return reject_l3(r, ParseError::TruncatedIpv6);
    if ((ip[0] >> 4) != 6) return reject_l3(r, ParseError::BadIpv6Header);

    uint8_t next = ip[6];
    const uint32_t payload = be16(ip + 4);
    // A jumbogram (RFC 2675, BIG TCP) says 0 here and keeps its length in a hop-by-hop
    // option; the frame is then its extent.
    const bool jumbo = payload == 0 && next == kProtoHopByHop;
    const uint32_t total = jumbo ? in_frame : kIpv6Header + payload;
    const uint32_t limit = std::min(total, readable);

    uint32_t off = kIpv6Header;
    unsigned headers = 0;
    bool fragment = false;
    bool first = true;
    uint8_t fragmented_proto = next;  // the fragment header's next header: same in every fragment
    // The fixed header is sound even when the chain is not: hash its addresses.
    auto fail_chain = [&](ParseError e) {
        fail(r, e);
        r.flow_hash = hash_ipv6(ip, ip[6], Ports{});
        return true;
    };
    while (is_ipv6_option_header(next) || next == kProtoFragment) {
        if (next == kProtoHopByHop && headers != 0) return fail_chain(ParseError::BadIpv6ExtOrder);
        if (headers == kMaxIpv6ExtHeaders) return fail_chain(ParseError::Ipv6ExtLimit);
        uint32_t len = kIpv6FragmentHeader;
        if (next != kProtoFragment) {
            if (limit < off + 2) return fail_chain(ParseError::TruncatedIpv6Ext);
            len = next == kProtoAh ? (ip[off + 1] + 2u) * 4 : (ip[off + 1] + 1u) * 8;
        }
        if (off + len > kMaxL3Len) return fail_chain(ParseError::Ipv6ExtLimit);
        if (limit < off + len) return fail_chain(ParseError::TruncatedIpv6Ext);
        if (next == kProtoFragment) {
            const uint16_t offset_flags = be16(ip + off + 2);
            // An atomic fragment (offset 0, no more fragments; RFC 6946) is a whole datagram.
            if ((offset_flags & 0xfff9) != 0) {
                fragment = true;
                first = (offset_flags & 0xfff8) == 0;
                fragmented_proto = ip[off];
            }
        }
        next = ip[off];
        off += len;
        ++headers;
        if (fragment && !first) break;  // what follows is the middle of someone's payload
    }

    r.l3_len = static_cast<uint16_t>(off);
    r.packet_type |= headers == 0 ? RTE_PTYPE_L3_IPV6 : RTE_PTYPE_L3_IPV6_EXT;
    Ports ports;
    if (fragment && !first) {
        mark_non_first_fragment(r);
    } else {
        ports = parse_l4(r, next, true, ip + off, limit - off, total - off, fragment);
    }
    r.flow_hash = fragment ? hash_ipv6(ip, fragmented_proto, Ports{}) : hash_ipv6(ip, next, ports);
    if (!r.malformed() && total > in_frame) fail(r, ParseError::TruncatedIpPayload);
    return true;
}

bool is_vlan_tpid(uint16_t t) { return t == kTpidVlan || t == kTpidQinq || t == kTpidQinqOld; }

}  // namespace

const char* parse_error_name(ParseError e) {
    switch (e) {
        case ParseError::None: return "";
        case ParseError::TruncatedL2: return "truncated_l2";
        case ParseError::TruncatedVlan: return "truncated_vlan";
        case ParseError::TooManyVlanTags: return "too_many_vlan_tags";
        case ParseError::TruncatedIpv4: return "truncated_ipv4";
        case ParseError::BadIpv4Header: return "bad_ipv4_header";
        case ParseError::TruncatedIpv6: return "truncated_ipv6";
        case ParseError::BadIpv6Header: return "bad_ipv6_header";
        case ParseError::TruncatedIpv6Ext: return "truncated_ipv6_ext";
        case ParseError::BadIpv6ExtOrder: return "bad_ipv6_ext_order";
        case ParseError::Ipv6ExtLimit: return "ipv6_ext_limit";
        case ParseError::TruncatedL4: return "truncated_l4";
        case ParseError::BadTcpOffset: return "bad_tcp_offset";
        case ParseError::TruncatedIpPayload: return "truncated_ip_payload";
    }
    return "?";
}

ParseResult parse_headers(const uint8_t* data, uint32_t len, uint32_t frame_len) {
    ParseResult r;
    frame_len = std::max(frame_len, len);
    if (len < kEtherHeader) {
        fail(r, ParseError::TruncatedL2);
        return r;
    }

    uint16_t ether_type = be16(data + 12);
    uint32_t off = kEtherHeader;
    unsigned tags = 0;
    while (is_vlan_tpid(ether_type)) {
        r.type |= ptype::kVlan;
        if (tags == kMaxVlanTags || len < off + kVlanTag) {
            fail(r, tags == kMaxVlanTags ? ParseError::TooManyVlanTags : ParseError::TruncatedVlan);
            r.flow_hash = hash_macs(data, ether_type);
            return r;
        }
        ether_type = be16(data + off + 2);
        off += kVlanTag;
        ++tags;
    }
    r.l2_len = static_cast<uint16_t>(off);
    r.vlan_tags = static_cast<uint8_t>(tags);
    if (tags == 0)
        r.packet_type = ether_type == kEtherArp ? RTE_PTYPE_L2_ETHER_ARP : RTE_PTYPE_L2_ETHER;
    else
        r.packet_type = tags == 1 ? RTE_PTYPE_L2_ETHER_VLAN : RTE_PTYPE_L2_ETHER_QINQ;

    const uint8_t* l3 = data + off;
    bool hashed = false;
    if (ether_type == kEtherIpv4) hashed = parse_ipv4(r, l3, len - off, frame_len - off);
    else if (ether_type == kEtherIpv6) hashed = parse_ipv6(r, l3, len - off, frame_len - off);
    else r.type |= ptype::kL3Other;
    if (!hashed) r.flow_hash = hash_macs(data, ether_type);
    return r;
}

// ---- the stage ------------------------------------------------------------------------------

Parse::Parse(const ParamValues& p)
    : Stage(kKind), drop_malformed_(p.get_bool("drop_malformed")) {
    for (size_t e = 1; e < kParseErrorCount; ++e)
        event_of_[e] = declare_event(parse_error_name(static_cast<ParseError>(e)));
    malformed_drop_ = declare_drop("malformed");
}

void Parse::process(Burst& b) {
    const uint16_t n = b.n;
    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
        // Two ahead: the mbuf itself (both lines: data pointer, then the offsets we write);
        // one ahead: its packet bytes, whose address needs that mbuf.
        if (i + 2 < n) {
            rte_prefetch0(b.d[i + 2].mbuf);
            rte_prefetch0(RTE_PTR_ADD(b.d[i + 2].mbuf, RTE_CACHE_LINE_SIZE));
        }
        if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(b.d[i + 1].mbuf, const void*));

        PacketDesc d = b.d[i];
        rte_mbuf* m = d.mbuf;
        const ParseResult r = parse_headers(rte_pktmbuf_mtod(m, const uint8_t*),
                                            rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m));
        m->packet_type = r.packet_type;
        m->l2_len = r.l2_len;
        m->l3_len = r.l3_len;
        m->l4_len = r.l4_len;
        d.type = r.type;
        d.flow_hash = r.flow_hash;
        if (r.malformed()) [[unlikely]] {
            count_event(event_of_[static_cast<size_t>(r.error)]);
            if (drop_malformed_) {
                drop(d, malformed_drop_);
                continue;
            }
        }
        b.d[kept++] = d;
    }
    b.n = kept;
}

TILEPIPE_STAGE(Parse, "parse",
               "find Ethernet/VLAN/IPv4/IPv6/L4 headers: mbuf offsets, packet type, flow hash",
               param<bool>("drop_malformed", false,
                           "drop truncated or inconsistent packets (reason \"malformed\") "
                           "instead of passing them on marked; each also counts as an event "
                           "naming what was wrong (truncated_ipv4, bad_tcp_offset, ...)"));

}  // namespace tp
