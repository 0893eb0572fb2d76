// Wire format: the numbers and byte order of the Ethernet, IPv4/IPv6 and transport headers the
// stages read and rewrite (IEEE 802.3/802.1Q, IANA protocol numbers, RFC 791/8200/793/768).
//
// Headers sit at any alignment in a frame, so fields are read byte by byte; the compiler fuses
// these into one load and a byte swap.
#pragma once

#include <cstdint>

namespace tp::wire {

// EtherTypes and VLAN tag protocol identifiers.
inline constexpr uint16_t kEtherIpv4 = 0x0800;
inline constexpr uint16_t kEtherArp = 0x0806;
inline constexpr uint16_t kEtherIpv6 = 0x86dd;
inline constexpr uint16_t kTpidVlan = 0x8100;     // 802.1Q
inline constexpr uint16_t kTpidQinq = 0x88a8;     // 802.1ad service tag
inline constexpr uint16_t kTpidQinqOld = 0x9100;  // pre-standard service tag, still seen

// IP protocol numbers (IPv4 protocol, IPv6 next header).
inline constexpr uint8_t kProtoHopByHop = 0;
inline constexpr uint8_t kProtoIcmp = 1;
inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoUdp = 17;
inline constexpr uint8_t kProtoRouting = 43;
inline constexpr uint8_t kProtoFragment = 44;
inline constexpr uint8_t kProtoAh = 51;
inline constexpr uint8_t kProtoIcmpv6 = 58;
inline constexpr uint8_t kProtoNoNext = 59;
inline constexpr uint8_t kProtoDestOpts = 60;
inline constexpr uint8_t kProtoSctp = 132;

// Header sizes in bytes.
inline constexpr uint32_t kEtherHeader = 14;
inline constexpr uint32_t kVlanTag = 4;
inline constexpr uint32_t kIpv4MinHeader = 20;
inline constexpr uint32_t kIpv6Header = 40;
inline constexpr uint32_t kIpv6FragmentHeader = 8;
inline constexpr uint32_t kTcpMinHeader = 20;

// Field offsets within their header.
inline constexpr uint32_t kIpv4Ttl = 8;
inline constexpr uint32_t kIpv4Checksum = 10;
inline constexpr uint32_t kIpv4Source = 12;
inline constexpr uint32_t kIpv4Destination = 16;
inline constexpr uint32_t kIpv6HopLimit = 7;
inline constexpr uint32_t kIpv6Source = 8;
inline constexpr uint32_t kIpv6Destination = 24;
inline constexpr uint32_t kTcpChecksum = 16;
inline constexpr uint32_t kUdpChecksum = 6;
inline constexpr uint32_t kIcmpChecksum = 2;

// Big-endian (network order) loads.
inline uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t be32(const uint8_t* p) { return uint32_t(be16(p)) << 16 | be16(p + 2); }
inline uint64_t be48(const uint8_t* p) { return uint64_t(be16(p)) << 32 | be32(p + 2); }

}  // namespace tp::wire
