#include "framework/capture/link_layer.hpp"
#include "descriptors/wire_format.hpp"

#include <algorithm>
#include <cstring>

namespace tp {

namespace {

using namespace wire;

constexpr uint16_t kEtherMaxLength = 1500;  // EtherType values below 0x0600 are 802.3 lengths

inline uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline uint32_t le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint16_t ether_type_of_ip_version(const uint8_t* ip, uint32_t len) {
    if (len == 0) return 0;
    switch (ip[0] >> 4) {
        case 4: return kEtherIpv4;
        case 6: return kEtherIpv6;
        default: return 0;
    }
}

// BSD address families as loopback headers carry them: AF_INET is 2 everywhere, AF_INET6
// differs by system (Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, Darwin 30).
uint16_t ether_type_of_family(uint32_t family, const uint8_t* ip, uint32_t len) {
    switch (family) {
        case 2: return kEtherIpv4;
        case 10:
        case 24:
        case 28:
        case 30: return kEtherIpv6;
        default: return ether_type_of_ip_version(ip, len);
    }
}

// Linux cooked headers use EtherTypes, except values below 0x0600 that name a non-Ethernet
// framing (802.2 LLC, Novell 802.3, CAN, ...): those frames get an 802.3 length instead.
uint16_t ether_type_of_cooked(uint16_t protocol, uint32_t payload) {
    if (protocol >= 0x0600) return protocol;
    return static_cast<uint16_t>(std::min<uint32_t>(payload, kEtherMaxLength));
}

// What to write: an Ethernet header from its parts, then `payload` bytes of the record.
struct Rewrite {
    const uint8_t* dst = nullptr;  // 6 bytes, or null for zero
    const uint8_t* src = nullptr;
    uint16_t ether_type = 0;
    const uint8_t* payload = nullptr;
    uint32_t payload_length = 0;
    uint32_t uncaptured = 0;  // wire bytes past the captured ones that belong to the frame
};

EthernetFrame write(const Rewrite& w, std::vector<uint8_t>& out) {
    out.resize(kEtherHeader + w.payload_length);
    uint8_t* o = out.data();
    if (w.dst != nullptr) std::memcpy(o, w.dst, 6);
    else std::memset(o, 0, 6);
    if (w.src != nullptr) std::memcpy(o + 6, w.src, 6);
    else std::memset(o + 6, 0, 6);
    o[12] = static_cast<uint8_t>(w.ether_type >> 8);
    o[13] = static_cast<uint8_t>(w.ether_type);
    if (w.payload_length > 0) std::memcpy(o + kEtherHeader, w.payload, w.payload_length);
    const uint32_t length = kEtherHeader + w.payload_length;
    return EthernetFrame{o, length, length + w.uncaptured, SkipReason::None};
}

EthernetFrame skipped(SkipReason r) { return EthernetFrame{nullptr, 0, 0, r}; }

uint32_t uncaptured(uint32_t caplen, uint32_t wire) { return wire > caplen ? wire - caplen : 0; }

// The cooked, loopback and raw link layers: a fixed header, replaced.
EthernetFrame fixed_header(const LinkLayer& link, const uint8_t* data, uint32_t caplen, uint32_t wire,
                           std::vector<uint8_t>& out) {
    uint32_t header = 0;
    switch (link.kind) {
        case LinkKind::Sll: header = 16; break;
        case LinkKind::Sll2: header = 20; break;
        case LinkKind::Null:
        case LinkKind::Loop: header = 4; break;
        default: break;
    }
    const bool whole_header = caplen >= header;
    Rewrite w;
    w.payload = data + std::min(caplen, header);
    w.payload_length = whole_header ? caplen - header : 0;
    w.uncaptured = uncaptured(caplen, wire);
    switch (link.kind) {
        case LinkKind::Sll:
            // packet type, ARPHRD type, address length, address (8), protocol
            if (whole_header) {
                if (be16(data + 4) == 6) w.src = data + 6;
                w.ether_type = ether_type_of_cooked(be16(data + 14), w.payload_length);
            }
            break;
        case LinkKind::Sll2:
            // protocol, reserved, interface index, ARPHRD type, packet type, address length,
            // address (8)
            if (whole_header) {
                if (data[11] == 6) w.src = data + 12;
                w.ether_type = ether_type_of_cooked(be16(data), w.payload_length);
            }
            break;
        case LinkKind::RawIp: w.ether_type = ether_type_of_ip_version(w.payload, w.payload_length); break;
        case LinkKind::Ipv4Only: w.ether_type = kEtherIpv4; break;
        case LinkKind::Ipv6Only: w.ether_type = kEtherIpv6; break;
        case LinkKind::Null:
            // The capturing host's byte order: a value with high bits set was the other one.
            if (whole_header) {
                const uint32_t family = le32(data);
                w.ether_type = ether_type_of_family((family & 0xffff0000u) != 0 ? be32(data) : family, w.payload,
                                                    w.payload_length);
            }
            break;
        case LinkKind::Loop:
            if (whole_header) w.ether_type = ether_type_of_family(be32(data), w.payload, w.payload_length);
            break;
        default: break;
    }
    return write(w, out);
}

// PPP (RFC 1661): an optional ff 03 (HDLC address and control), then the protocol field, one
// byte when its low bit is set (protocol field compression), else two.
EthernetFrame ppp(const uint8_t* data, uint32_t caplen, uint32_t wire, std::vector<uint8_t>& out) {
    uint32_t at = caplen >= 2 && data[0] == 0xff && data[1] == 0x03 ? 2 : 0;
    if (caplen < at + 1) return skipped(SkipReason::LinkHeaderCut);
    uint16_t protocol = data[at];
    if ((protocol & 1) != 0) {
        at += 1;
    } else {
        if (caplen < at + 2) return skipped(SkipReason::LinkHeaderCut);
        protocol = be16(data + at);
        at += 2;
    }
    Rewrite w;
    switch (protocol) {
        case 0x0021: w.ether_type = kEtherIpv4; break;
        case 0x0057: w.ether_type = kEtherIpv6; break;
        case 0x0281: w.ether_type = 0x8847; break;  // MPLS unicast
        case 0x0283: w.ether_type = 0x8848; break;  // MPLS multicast
        case 0x002b: w.ether_type = 0x8137; break;  // IPX
        default:
            // 8xxx: network control protocols (IPCP, IPV6CP, ...); cxxx: link control (LCP,
            // PAP, CHAP, LQR, ...): a link's own signalling, with no Ethernet form.
            return skipped(protocol >= 0x8000 ? SkipReason::PppControl : SkipReason::PppOtherProtocol);
    }
    w.payload = data + at;
    w.payload_length = caplen - at;
    w.uncaptured = uncaptured(caplen, wire);
    return write(w, out);
}

// An 802.11 MAC frame of `caplen` captured bytes; `fcs`: it ends in a 4-byte frame check
// sequence; `padded`: radiotap says its body starts on a 4-byte boundary.
EthernetFrame wlan(const uint8_t* f, uint32_t caplen, uint32_t wire, bool fcs, bool padded, std::vector<uint8_t>& out) {
    if (caplen < 2) return skipped(SkipReason::LinkHeaderCut);
    const uint8_t fc0 = f[0], fc1 = f[1];
    const unsigned type = (fc0 >> 2) & 3, subtype = fc0 >> 4;
    if (type == 0) return skipped(SkipReason::WlanManagement);
    if (type != 2) return skipped(SkipReason::WlanControl);  // 1: control, 3: extension
    const bool to_ds = (fc1 & 0x01) != 0, from_ds = (fc1 & 0x02) != 0;
    uint32_t header = 24 + (to_ds && from_ds ? 6 : 0);
    const bool qos = (subtype & 0x8) != 0;
    const uint32_t qos_at = header;
    if (qos) header += 2 + ((fc1 & 0x80) != 0 ? 4 : 0);  // QoS control, HT control (+HTC/Order)
    if ((subtype & 0x4) != 0) return skipped(SkipReason::WlanNoData);  // null, QoS null, CF-only
    if (caplen < header) return skipped(SkipReason::LinkHeaderCut);
    if ((fc1 & 0x40) != 0) return skipped(SkipReason::WlanProtected);
    if (qos && (f[qos_at] & 0x80) != 0) return skipped(SkipReason::WlanAmsdu);
    if (padded) header = (header + 3) & ~3u;

    uint32_t end = caplen;
    uint32_t tail = uncaptured(caplen, wire);
    if (fcs) {
        if (tail >= 4) tail -= 4;  // the check sequence was not captured
        else if (caplen >= header + 4 && tail == 0) end -= 4;
    }
    if (end <= header) return skipped(SkipReason::WlanNoData);
    const uint8_t* body = f + header;
    const uint32_t body_length = end - header;

    // DA and SA by the distribution system bits: addr1 at 4, addr2 at 10, addr3 at 16, addr4 at 24.
    Rewrite w;
    w.dst = to_ds ? f + 16 : f + 4;
    w.src = from_ds ? (to_ds ? f + 24 : f + 16) : f + 10;
    w.uncaptured = tail;
    if (body_length >= 8 && body[0] == 0xaa && body[1] == 0xaa && body[2] == 0x03) {
        w.ether_type = be16(body + 6);  // SNAP: OUI (RFC 1042 or 802.1H), then the EtherType
        w.payload = body + 8;
        w.payload_length = body_length - 8;
    } else {
        w.ether_type = static_cast<uint16_t>(std::min<uint32_t>(body_length, kEtherMaxLength));  // 802.3 + LLC
        w.payload = body;
        w.payload_length = body_length;
    }
    return write(w, out);
}

// Radiotap: version, pad, length (LE), then present bitmaps (bit 31: another word follows);
// the fields start after the last. Only Flags (bit 1) matters here: it follows TSFT (bit 0, 8
// bytes aligned to 8) and says whether the frame ends in an FCS (0x10) and whether its body
// is padded to 4 bytes (0x20).
EthernetFrame radiotap(const uint8_t* data, uint32_t caplen, uint32_t wire, std::vector<uint8_t>& out) {
    if (caplen < 8) return skipped(SkipReason::LinkHeaderCut);
    const uint32_t length = le16(data + 2);
    if (length < 8 || caplen < length) return skipped(SkipReason::LinkHeaderCut);
    const uint32_t present = le32(data + 4);
    uint32_t at = 8;
    for (uint32_t word = present; (word & 0x80000000u) != 0; at += 4) {
        if (at + 4 > length) return skipped(SkipReason::LinkHeaderCut);
        word = le32(data + at);
    }
    uint8_t flags = 0;
    if ((present & 0x1) != 0) at = ((at + 7) & ~7u) + 8;
    if ((present & 0x2) != 0) {
        if (at >= length) return skipped(SkipReason::LinkHeaderCut);
        flags = data[at];
    }
    return wlan(data + length, caplen - length, wire > length ? wire - length : 0, (flags & 0x10) != 0,
                (flags & 0x20) != 0, out);
}

// PPI: version, flags, length (LE), the link type inside (LE), fields, then the frame.
EthernetFrame ppi(const uint8_t* data, uint32_t caplen, uint32_t wire, std::vector<uint8_t>& out) {
    if (caplen < 8) return skipped(SkipReason::LinkHeaderCut);
    const uint32_t length = le16(data + 2);
    if (length < 8 || caplen < length) return skipped(SkipReason::LinkHeaderCut);
    const uint32_t inner = le32(data + 4);
    const uint8_t* f = data + length;
    const uint32_t cap = caplen - length, w = wire > length ? wire - length : 0;
    if (inner == 105) return wlan(f, cap, w, false, false, out);
    if (inner == 1) return EthernetFrame{f, cap, w, cap == 0 ? SkipReason::EmptyRecord : SkipReason::None};
    return skipped(SkipReason::PpiOtherLink);
}

struct LinkName {
    int linktype;
    LinkKind kind;
    const char* name;
    const char* becomes;
};

constexpr LinkName kLinks[] = {
    {1, LinkKind::Ethernet, "EN10MB", "as is"},
    {113, LinkKind::Sll, "LINUX_SLL", "cooked header -> Ethernet (its protocol, source address)"},
    {276, LinkKind::Sll2, "LINUX_SLL2", "cooked header -> Ethernet (its protocol, source address)"},
    {101, LinkKind::RawIp, "RAW", "Ethernet header added, IPv4/IPv6 by version"},
    {228, LinkKind::Ipv4Only, "IPV4", "Ethernet header added, IPv4"},
    {229, LinkKind::Ipv6Only, "IPV6", "Ethernet header added, IPv6"},
    {0, LinkKind::Null, "NULL", "loopback header -> Ethernet by address family"},
    {108, LinkKind::Loop, "LOOP", "loopback header -> Ethernet by address family"},
    {9, LinkKind::Ppp, "PPP", "PPP protocol -> EtherType (IPv4, IPv6, MPLS, IPX); control protocols skipped"},
    {105, LinkKind::Wlan, "IEEE802_11",
     "data frames -> Ethernet II (LLC/SNAP) or 802.3, DA/SA from the 802.11 addresses; "
     "management, control, null and encrypted frames skipped"},
    {127, LinkKind::Radiotap, "IEEE802_11_RADIO", "radiotap header (and FCS) stripped, then as IEEE802_11"},
    {192, LinkKind::Ppi, "PPI", "PPI header stripped, then as IEEE802_11 or EN10MB inside"},
};

}  // namespace

const char* skip_reason_name(SkipReason r) {
    switch (r) {
        case SkipReason::None: return "none";
        case SkipReason::EmptyRecord: return "empty_record";
        case SkipReason::LinkHeaderCut: return "link_header_cut";
        case SkipReason::WlanManagement: return "wlan_management";
        case SkipReason::WlanControl: return "wlan_control";
        case SkipReason::WlanNoData: return "wlan_no_data";
        case SkipReason::WlanProtected: return "wlan_protected";
        case SkipReason::WlanAmsdu: return "wlan_amsdu";
        case SkipReason::PppControl: return "ppp_control";
        case SkipReason::PppOtherProtocol: return "ppp_other_protocol";
        case SkipReason::PpiOtherLink: return "ppi_other_link";
        case SkipReason::Count: break;
    }
    return "?";
}

const char* skip_reason_text(SkipReason r) {
    switch (r) {
        case SkipReason::EmptyRecord: return "records with no captured bytes";
        case SkipReason::LinkHeaderCut: return "records cut inside their link-layer header";
        case SkipReason::WlanManagement: return "802.11 management frames";
        case SkipReason::WlanControl: return "802.11 control frames";
        case SkipReason::WlanNoData: return "802.11 data frames without a body (null data)";
        case SkipReason::WlanProtected: return "encrypted 802.11 data frames";
        case SkipReason::WlanAmsdu: return "802.11 A-MSDU aggregates";
        case SkipReason::PppControl: return "PPP control protocol frames (LCP, IPCP, PAP, ...)";
        case SkipReason::PppOtherProtocol: return "PPP frames of a protocol with no EtherType here";
        case SkipReason::PpiOtherLink: return "PPI records of a link type other than 802.11 or Ethernet";
        default: return "records";
    }
}

std::optional<LinkLayer> link_layer_of(int linktype) {
    // DLT_RAW is 12 on most systems and 14 on OpenBSD; LINKTYPE_RAW is 101.
    if (linktype == 12 || linktype == 14) return LinkLayer{LinkKind::RawIp, uint32_t(linktype)};
    for (const LinkName& l : kLinks)
        if (l.linktype == linktype) return LinkLayer{l.kind, uint32_t(linktype)};
    return std::nullopt;
}

const char* supported_link_types() {
    return "EN10MB, LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6, NULL, LOOP, PPP, IEEE802_11, IEEE802_11_RADIO, PPI";
}

std::string link_types_help() {
    std::string s;
    for (const LinkName& l : kLinks)
        s += "    " + std::string(l.name) + " (" + std::to_string(l.linktype) + "): " + l.becomes + "\n";
    return s;
}

EthernetFrame to_ethernet(const LinkLayer& link, const uint8_t* data, uint32_t caplen, uint32_t wire,
                          std::vector<uint8_t>& scratch) {
    if (caplen == 0) return skipped(SkipReason::EmptyRecord);
    switch (link.kind) {
        case LinkKind::Ethernet: return EthernetFrame{data, caplen, wire, SkipReason::None};
        case LinkKind::Ppp: return ppp(data, caplen, wire, scratch);
        case LinkKind::Wlan: return wlan(data, caplen, wire, false, false, scratch);
        case LinkKind::Radiotap: return radiotap(data, caplen, wire, scratch);
        case LinkKind::Ppi: return ppi(data, caplen, wire, scratch);
        default: return fixed_header(link, data, caplen, wire, scratch);
    }
}

}  // namespace tp
