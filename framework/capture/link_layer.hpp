// Link layers a capture may hold, and how each record becomes the Ethernet frame `parse` reads.
//
// EN10MB loads as is. The others are rewritten at load time (LINKTYPE values, as files carry
// them; libpcap's DLT values are the same numbers except raw IP):
//   LINUX_SLL (113), LINUX_SLL2 (276)   the cooked header's protocol field (a value below
//                                       0x0600, e.g. 802.2 LLC, becomes an 802.3 length);
//                                       source MAC: the header's 6-byte address, if any
//   RAW (101; DLT 12 or 14)             0x0800 or 0x86dd from the IP version nibble, else 0
//   IPV4 (228), IPV6 (229)              0x0800, 0x86dd
//   NULL (0), LOOP (108)                from the address family (2: IPv4; 10, 24, 28, 30:
//                                       IPv6), else from the IP version nibble
//   PPP (9)                             the PPP protocol field (after an optional ff 03
//                                       address and control): IPv4, IPv6, MPLS unicast and
//                                       multicast, IPX; control protocols (LCP, PAP, CHAP,
//                                       IPCP, ...) are skipped (ppp_control), other network
//                                       protocols too (ppp_other_protocol)
//   IEEE802_11 (105)                    data frames with a body: an LLC/SNAP body becomes
//   IEEE802_11_RADIO (127: radiotap)    Ethernet II (the SNAP EtherType), any other LLC body
//   PPI (192, 802.11 or Ethernet inside) an 802.3 frame of that length; destination and source
//                                       MAC are the 802.11 DA and SA (by ToDS/FromDS).
//                                       Radiotap and PPI headers are stripped, and a frame
//                                       check sequence radiotap says is present. Skipped:
//                                       management (wlan_management) and control frames
//                                       (wlan_control), data frames with no body
//                                       (wlan_no_data), encrypted (wlan_protected) and
//                                       A-MSDU (wlan_amsdu) bodies, PPI of another link
//                                       type (ppi_other_link)
// Except for EN10MB, the destination MAC is zero where the link layer has none, the source MAC
// too. A record shorter than its cooked, loopback or raw header becomes a bare Ethernet header
// with EtherType 0; one too short to tell what a PPP or 802.11 frame is is skipped
// (link_header_cut). A record with no captured bytes is skipped (empty_record).
//
// Wire length: a record's original length with the removed link header replaced by the 14
// bytes of Ethernet (an uncaptured tail stays uncaptured: wire - captured is kept).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tp {

enum class LinkKind : uint8_t { Ethernet, Sll, Sll2, RawIp, Ipv4Only, Ipv6Only, Null, Loop, Ppp, Wlan, Radiotap, Ppi };

// Why a record has no Ethernet form and is skipped (counted, never replayed).
enum class SkipReason : uint8_t {
    None,
    EmptyRecord,
    LinkHeaderCut,
    WlanManagement,
    WlanControl,
    WlanNoData,
    WlanProtected,
    WlanAmsdu,
    PppControl,
    PppOtherProtocol,
    PpiOtherLink,
    Count
};
constexpr size_t kSkipReasons = size_t(SkipReason::Count);

// "empty_record", "wlan_management", ...: the name reports use.
const char* skip_reason_name(SkipReason r);
// One phrase for a warning: "records with no captured bytes", ...
const char* skip_reason_text(SkipReason r);

struct LinkLayer {
    LinkKind kind = LinkKind::Ethernet;
    uint32_t linktype = 1;  // as the file gave it
};

// The link layer of a LINKTYPE (or DLT) value, or nullopt when it is not supported.
std::optional<LinkLayer> link_layer_of(int linktype);
// "EN10MB, LINUX_SLL, ...": what link_layer_of accepts, for an error message.
const char* supported_link_types();
// A line per supported link type: what each becomes (`tilepipe stages pcap`).
std::string link_types_help();

// One record as Ethernet: its bytes (the record's own, or `scratch`'s), or why it is skipped.
struct EthernetFrame {
    const uint8_t* data = nullptr;
    uint32_t length = 0;
    uint32_t wire_length = 0;
    SkipReason skip = SkipReason::None;
};

// Normalises one record of `caplen` captured bytes, `wire_length` on the wire.
EthernetFrame to_ethernet(const LinkLayer& link, const uint8_t* data, uint32_t caplen, uint32_t wire_length,
                          std::vector<uint8_t>& scratch);

}  // namespace tp
