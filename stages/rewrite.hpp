// Rewrite (`rewrite`): sets MAC addresses, IPv4 addresses and TCP/UDP ports, NAT style, keeping
// every checksum valid.
//
// Synopsis
//   - { stage: rewrite, dst_mac: "02:00:00:00:00:01", src_ip: 192.0.2.1, src_port: 40000 }
//
// Parameters (any subset; one left empty, or -1 for a port, is not touched)
//   src_mac, dst_mac    Ethernet source / destination, aa:bb:cc:dd:ee:ff     default ""
//   src_ip, dst_ip      IPv4 source / destination, dotted quad                default ""
//   src_port, dst_port  TCP or UDP source / destination port, 0-65535         default -1
//
// Which packets change (after `parse`, whose offsets and type bits it reads):
//   - MACs: every frame holding a whole Ethernet header, IP or not.
//   - IPv4 addresses: packets with a whole IPv4 header. The header checksum is updated, and so
//     is the TCP or UDP checksum when parse found that header whole (the pseudo-header holds the
//     addresses); a non-first fragment has no L4 header, a first fragment's L4 checksum is
//     updated. IPv6 packets keep their addresses.
//   - Ports: packets (IPv4 or IPv6) where parse found a whole TCP or UDP header, fragments after
//     the first excepted; the L4 checksum is updated. SCTP (CRC-32c) is not rewritten.
// Checksums are updated incrementally (RFC 1624, checksum_adjust below) rather than recomputed:
// that costs a few additions per field, reads nothing beyond the headers (a frame cut short by a
// snapshot stays safe), and keeps a checksum exactly as valid as it was: a valid one stays
// valid, as rte_ipv4_cksum / rte_ipv4_udptcp_cksum would compute it. A UDP checksum of 0 over
// IPv4 (and in IPv6 tunnels, RFC 6935) means "none" and stays 0; an updated UDP checksum that
// comes out 0 is written 0xffff.
// Nothing else in the packet changes; descriptors pass unchanged.
//
// Events (counted, the packet still passes): `not_ipv4` (an address was to be set but the
// packet has no whole IPv4 header), `no_ports` (a port was to be set but the packet has no
// whole TCP/UDP header).
#pragma once

#include <array>
#include <cstdint>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

// RFC 1624 eqn. 3: the Internet checksum `sum` (as stored in the header) of data in which one
// 16-bit word changed from `old_word` to `new_word`. All three in the same byte order (one's
// complement sums do not care which). Pure; used by `rewrite` and `lpm_route`.
inline uint16_t checksum_adjust(uint16_t sum, uint16_t old_word, uint16_t new_word) {
    uint32_t s = uint32_t(uint16_t(~sum)) + uint32_t(uint16_t(~old_word)) + new_word;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return static_cast<uint16_t>(~s);
}

class Rewrite final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 0.5;  // a few header writes

    explicit Rewrite(const ParamValues& params);
    void process(Burst& b) override;

private:
    // Values in packet byte order; `set_*` says which to write.
    bool set_src_mac_ = false, set_dst_mac_ = false;
    bool set_src_ip_ = false, set_dst_ip_ = false;
    bool set_src_port_ = false, set_dst_port_ = false;
    std::array<uint8_t, 6> src_mac_{}, dst_mac_{};
    std::array<uint8_t, 4> src_ip_{}, dst_ip_{};
    std::array<uint8_t, 2> src_port_{}, dst_port_{};

    uint16_t not_ipv4_;
    uint16_t no_ports_;
};

}  // namespace tp
