// Rewrite (`rewrite`): sets MAC addresses, IPv4 or IPv6 addresses and TCP/UDP ports, NAT
// style, for every packet or by rules, keeping every checksum valid.
//
// Synopsis
//   - { stage: rewrite, dst_mac: "02:00:00:00:00:01", src_ip: 192.0.2.1, src_port: 40000 }
//   - { stage: rewrite, rules: conf/data/nat.rules }
//   - { stage: rewrite, port_macs: "02:00:00:00:01:00, 02:00:00:00:01:01",
//                       next_hop_macs: "02:00:00:00:02:00, 02:00:00:00:02:01" }   # l3fwd
//
// Parameters (any subset; one left empty, or -1 for a port, is not touched)
//   src_mac, dst_mac    Ethernet source / destination, aa:bb:cc:dd:ee:ff     default ""
//   port_macs           source MAC by output port: port 0's, port 1's, ...    default ""
//                       comma-separated (not with src_mac)
//   next_hop_macs       destination MAC by output port, likewise (not with    default ""
//                       dst_mac); with port_macs, one of each per port
//   src_ip, dst_ip      source / destination address, IPv4 or IPv6; set on    default ""
//                       packets of that family only
//   src_port, dst_port  TCP or UDP source / destination port, 0-65535         default -1
//   rules               a rules file (below) instead of the fields above      default ""
//
// Rules file: one rule per line, `#` comments; match words, then `set` and the fields to write
// (the parameters' names and values). The first rule whose match holds rewrites the packet;
// a packet no rule matches passes unchanged (event `unmatched`). Rules are tried in order, so
// they suit NAT tables of tens of rules, not thousands.
//
//   # match                              set
//   src 10.0.0.0/8 proto tcp             set src_ip 192.0.2.1 src_port 40000
//   dst 192.0.2.1 dport 8080             set dst_ip 10.0.0.5 dst_port 80
//   src 2001:db8:1::/48                  set src_ip 2001:db8:ffff::1
//   set dst_mac 02:00:00:00:00:02        # the rest: only the next hop's MAC
//
// Match words: `src PREFIX`, `dst PREFIX` (IPv4 or IPv6, a bare address is a host), `proto
// tcp|udp|icmp`, `sport RANGE`, `dport RANGE` (N or LOW-HIGH; only TCP/UDP packets match them).
// A rule is of one address family at most: its prefixes and addresses must agree, and it
// matches only packets of that family. Mistakes are `file:line: message` before traffic.
//
// Per-port MACs, as DPDK's l3fwd sets them: after `lpm_route` has written the output port to
// the descriptor (PacketDesc::port), a packet leaving port P gets port_macs[P] as its source
// (the port's own address, which l3fwd reads from the NIC) and next_hop_macs[P] as its
// destination (the neighbour behind port P, l3fwd's `--eth-dest=P,MAC`): a route names a port,
// and each port has one next hop. They are written before any rule, so a rule's MAC wins; a
// port beyond a given list keeps its MACs and is counted as `no_port_mac`.
//
// Which packets change (after `parse`, whose offsets and type bits it reads):
//   - MACs: every frame holding a whole Ethernet header, IP or not.
//   - Addresses: packets with a whole header of the address's family. The IPv4 header checksum
//     is updated, and so is the TCP or UDP checksum when parse found that header whole (the
//     pseudo-header holds the addresses, IPv4 and IPv6 alike), and an ICMPv6 checksum (which
//     covers them too); a non-first fragment has no L4 header, a first fragment's L4 checksum
//     is updated. Not handled: an IPv6 routing header, whose final destination (not the header's
//     dst) is in the pseudo-header, so a dst_ip rewrite leaves such a checksum wrong.
//   - Ports: packets (IPv4 or IPv6) where parse found a whole TCP or UDP header, fragments after
//     the first excepted; the L4 checksum is updated. SCTP (CRC-32c) is not rewritten.
// Checksums are updated incrementally (RFC 1624, checksum_adjust below) rather than recomputed:
// that costs a few additions per field, reads nothing beyond the headers (a frame cut short by a
// snapshot stays safe), and keeps a checksum exactly as valid as it was: a valid one stays
// valid, as rte_ipv4_cksum / rte_ipv4_udptcp_cksum / rte_ipv6_udptcp_cksum would compute it.
// A UDP checksum of 0 over IPv4 (and in IPv6 tunnels, RFC 6935) means "none" and stays 0; an
// updated UDP checksum that comes out 0 is written 0xffff.
// Nothing else in the packet changes; descriptors pass unchanged.
//
// Events (counted, the packet still passes): `not_ipv4` / `not_ipv6` (an address of that family
// was to be set but the packet has no whole header of it), `no_ports` (a port was to be set but
// the packet has no whole TCP/UDP header), `unmatched` (rules given, none matched),
// `no_port_mac` (a per-port MAC list has no entry for the packet's port).
//
// Every parameter mistake (a malformed MAC or address, lists of different lengths, fields
// given with `rules`, a rules-file line) is found by check_params, without EAL.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

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

// One rewrite: what to match (nothing = every packet) and which fields to write. Values are
// in packet byte order.
struct RewriteRule {
    int line = 0;     // in the rules file; 0 for the parameters
    int family = 0;       // packets it matches: 0 any, 4, 6 (a rules-file rule takes the
                          // family of its prefixes and addresses)
    int set_family = 0;   // family of the addresses it sets: 0 none, 4, 6
    // Match.
    bool match_src = false, match_dst = false;
    std::array<uint8_t, 16> src_net{}, src_mask{}, dst_net{}, dst_mask{};  // first 4 bytes for IPv4
    uint8_t l4 = 0;  // a ptype::kL4* value to match, 0 = any
    bool match_ports = false;
    uint16_t sport_lo = 0, sport_hi = 65535, dport_lo = 0, dport_hi = 65535;
    // Set.
    bool set_src_mac = false, set_dst_mac = false;
    bool set_src_ip = false, set_dst_ip = false;
    bool set_src_port = false, set_dst_port = false;
    std::array<uint8_t, 6> src_mac{}, dst_mac{};
    std::array<uint8_t, 16> src_ip{}, dst_ip{};  // first 4 bytes for IPv4
    std::array<uint8_t, 2> src_port{}, dst_port{};

    bool matches_all() const { return family == 0 && !match_src && !match_dst && l4 == 0 && !match_ports; }
};

class Rewrite final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 0.5;  // a few header writes

    // Every check of the parameters and the rules file; needs no EAL.
    static void check_params(const ParamValues& params);

    explicit Rewrite(const ParamValues& params);
    void process(Burst& b) override;

    const std::vector<RewriteRule>& rules() const { return rules_; }

    struct View;  // what parse found about a packet, read once per packet (rewrite.cpp)

private:
    void apply(const RewriteRule& r, const View& v);
    void set_port_macs(const PacketDesc& d, const View& v);

    std::vector<RewriteRule> rules_;
    bool from_file_ = false;
    std::vector<std::array<uint8_t, 6>> port_src_;  // by output port; empty = not set
    std::vector<std::array<uint8_t, 6>> port_dst_;

    uint16_t not_ipv4_;
    uint16_t not_ipv6_;
    uint16_t no_ports_;
    uint16_t unmatched_;
    uint16_t no_port_mac_;
};

}  // namespace tp
