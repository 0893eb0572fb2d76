/// @file
/// PacketDesc, the 16-byte handle tiles pass to each other instead of packets, and Burst, up
/// to 32 of them handled together: the unit every hot path works on.
///
/// A descriptor is a value: copying it never touches the packet. Exactly one tile owns a
/// descriptor (and so its mbuf) at a time; ownership moves with the descriptor through a
/// channel. Parsed header offsets are kept in the mbuf itself (l2_len, l3_len, l4_len,
/// packet_type), as DPDK's own libraries expect; the descriptor carries what dispatch needs
/// without touching the mbuf: the flow hash, the frame length, the input port, a compact
/// summary of the packet type, and whether the packet is a latency sample.
///
/// A stage receives a burst, keeps the descriptors that go on at the front (in order) and sets
/// `n` to their count; the descriptors it dropped it freed (Stage::drop). A burst is a plain
/// value living on a tile's stack or in a node; it never allocates.
#pragma once

#include <cstdint>
#include <type_traits>

struct rte_mbuf;

namespace tp {

/// Compact packet-type bits carried in PacketDesc::type (the full RTE_PTYPE_* value is in
/// mbuf->packet_type once the `parse` stage ran).
namespace ptype {
inline constexpr uint8_t kL3Mask = 0x03;   ///< the L3 field
inline constexpr uint8_t kL3None = 0x00;   ///< no L3 header known
inline constexpr uint8_t kL3Ipv4 = 0x01;   ///< IPv4
inline constexpr uint8_t kL3Ipv6 = 0x02;   ///< IPv6
inline constexpr uint8_t kL3Other = 0x03;  ///< ARP, MPLS, PPPoE, ...

inline constexpr uint8_t kL4Mask = 0x1c;   ///< the L4 field
inline constexpr uint8_t kL4None = 0x00;   ///< no L4 header known
inline constexpr uint8_t kL4Tcp = 0x04;    ///< TCP
inline constexpr uint8_t kL4Udp = 0x08;    ///< UDP
inline constexpr uint8_t kL4Icmp = 0x0c;   ///< ICMP or ICMPv6, by L3
inline constexpr uint8_t kL4Frag = 0x10;   ///< a non-first fragment: no L4 header
inline constexpr uint8_t kL4Other = 0x14;  ///< another L4 protocol

inline constexpr uint8_t kVlan = 0x20;       ///< one or more 802.1Q/802.1ad tags
inline constexpr uint8_t kParsed = 0x40;     ///< `parse` ran on this packet
inline constexpr uint8_t kMalformed = 0x80;  ///< a header was truncated or inconsistent
}  // namespace ptype

/// The handle of one packet: its mbuf and what dispatch needs without touching it.
struct alignas(16) PacketDesc {
    /// Uninitialised, as a burst's slots are; PacketDesc{} is all zero.
    PacketDesc() = default;
    /// Everything but `sampled`, which only a source's node sets.
    constexpr PacketDesc(rte_mbuf* m, uint32_t hash, uint16_t len, uint8_t in_port, uint8_t ptype_bits)
        : mbuf(m), flow_hash(hash), length(len), port(in_port), sampled(0), type(ptype_bits) {}

    rte_mbuf* mbuf;      ///< owner of the packet bytes
    uint32_t flow_hash;  ///< symmetric 5-tuple hash (0 until parsed)
    uint16_t length;     ///< frame length in bytes when the mbuf is simple (below), else
                         ///< kLengthSaturated: read the mbuf's pkt_len (frame_length())
    uint8_t port : 7;    ///< input port (source index for captures), up to kPortMax
    uint8_t sampled : 1; ///< a latency sample: its mbuf holds the entry TSC (set by the source's
                         ///< node, read by sinks; nobody else needs to keep it but by copying)
    uint8_t type;        ///< ptype:: bits

    /// `length` of a frame that is not simple or is 64 KiB or longer.
    static constexpr uint16_t kLengthSaturated = 0xffff;
    /// The largest input port a descriptor can carry.
    static constexpr uint8_t kPortMax = 127;
};
// A simple mbuf is direct, one segment, has refcnt 1 and comes from the node's pool
// (StageEnv::pool; between nodes, the app's first pool when it has one per source placement):
// a sink may put it straight back into that pool without reading its header (DPDK's MBUF_FAST_FREE
// contract), so the header lines stay in the cache of the CPU that allocates them. Whoever
// makes a descriptor for anything else (a chain, a clone, another pool's mbuf, a frame of
// 64 KiB or more) sets kLengthSaturated; a stage that turns a simple mbuf into anything else
// must do the same.

static_assert(sizeof(PacketDesc) == 16, "a descriptor must stay 16 bytes: four per cache line");
static_assert(alignof(PacketDesc) == 16, "16-byte alignment lets a slot hold one with one SSE move");
static_assert(std::is_trivially_copyable_v<PacketDesc>, "descriptors are copied by value");
static_assert(std::is_standard_layout_v<PacketDesc>);

/// Frame length of a descriptor; frames of 64 KiB and more (BIG TCP, jumbograms) read the
/// mbuf's pkt_len, which is authoritative.
uint32_t frame_length(const PacketDesc& d);

/// `len` as PacketDesc::length holds it: kLengthSaturated from 64 KiB - 1 on.
inline uint16_t saturate_length(uint32_t len) {
    return len >= PacketDesc::kLengthSaturated ? PacketDesc::kLengthSaturated
                                               : static_cast<uint16_t>(len);
}

/// The most descriptors a burst holds.
inline constexpr uint16_t kBurstMax = 32;

/// Up to kBurstMax descriptors, the first `n` of them valid.
struct Burst {
    uint16_t n = 0;                    ///< descriptors held, at the front of `d`
    alignas(64) PacketDesc d[kBurstMax];  ///< the descriptors

    /// No descriptor held.
    bool empty() const { return n == 0; }
    /// kBurstMax descriptors held.
    bool full() const { return n == kBurstMax; }
    /// First descriptor.
    PacketDesc* begin() { return d; }
    /// Past the last descriptor held.
    PacketDesc* end() { return d + n; }
    /// First descriptor.
    const PacketDesc* begin() const { return d; }
    /// Past the last descriptor held.
    const PacketDesc* end() const { return d + n; }
};

}  // namespace tp
