// Acl (`acl`): a 5-tuple firewall over IPv4 and IPv6, classified with DPDK's rte_acl in bursts.
//
// Synopsis
//   - { stage: acl, rules: conf/data/firewall.rules, default: permit }
//
// Parameters
//   rules    rules file (syntax below)                                   required
//   default  what happens to a packet no permit/deny rule matches       default permit
//            (permit | deny)
//
// Rules file: one rule per line, `#` comments, words separated by blanks:
//
//   ACTION [FIELD VALUE]...
//
//   ACTION   permit | deny | count | mark N            (N: 0 to 4294967295)
//   proto    any | tcp | udp | sctp | icmp | icmp6 | gre | esp | ah | 0-255
//   src, dst any | ADDRESS | ADDRESS/LEN               (IPv4 or IPv6; host bits must be zero)
//   sport, dport  any | PORT | LOW-HIGH                (only with proto tcp, udp, sctp or any)
//   family   any | ipv4 | ipv6                         (implied by an address)
//   prio     0-4095                                    (default 0)
//
//   deny   proto tcp  src 10.0.0.0/8  dst any  sport any  dport 22-23  prio 10
//   permit proto udp  dst 2001:db8::/32  dport 53
//   mark 7 proto tcp  dport 80
//   count  src 192.168.0.0/16
//
// Fields left out match anything; each field is given at most once. A rule whose addresses
// are IPv4 (or `family ipv4`) applies to IPv4 packets only, likewise for IPv6; a rule with no
// address and no family applies to both. `icmp` is protocol 1, the IPv4 one; IPv6's is `icmp6`.
//
// Semantics. Rules sit in three independent groups, one rte_acl category each; in each group
// the matching rule with the highest `prio` wins, and among equal prios the earlier line:
//   - permit/deny decide the verdict; when none matches, `default` does. A denied packet is
//     dropped (`denied`, or `default_deny` when the default denied it).
//   - mark sets the packet's mark (the winning mark rule's N) without deciding anything: DPDK's
//     flow-mark convention, mbuf->hash.fdir.hi with RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID
//     set in ol_flags (read it with packet_mark()). It overwrites the RSS hash's neighbour
//     word only; hash.rss (the low word) is left as it was.
//   - count counts the packet against the winning count rule and decides nothing.
// Every rule has a hit counter (packets for which it was its group's winner): rule_hits().
//
// Packet key: the stage runs after `parse` and reads the header offsets it left in the mbuf.
// Protocol is the IPv4 protocol field, or the IPv6 header after the extension headers parse
// walked. Ports are read only when parse found a whole TCP, UDP or SCTP header; a non-first
// fragment, ICMP and other protocols carry ports 0 (they match `any`, or a range holding 0).
// A packet without a whole IP header (ARP, MPLS, malformed, or not parsed) matches no rule and
// gets `default` (event `not_ip`). Nothing past the headers parse vouched for is read.
//
// Errors: every mistake in the rules file is a LocatedError `file:line: message` raised by
// open(), before traffic: unknown action or field, missing or bad value, bad prefix, bad port
// range, repeated field, address families that disagree, ports with a port-less protocol.
//
// Events: `counted` (a count rule matched), `marked`, `not_ip`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"
#include "framework/rules/rule_file.hpp"

struct rte_acl_ctx;
struct rte_mbuf;

namespace tp {

enum class AclAction : uint8_t { Permit, Deny, Count, Mark };

struct AclRule {
    int line = 0;  // in the rules file
    AclAction action = AclAction::Permit;
    uint32_t mark = 0;
    bool ipv4 = true;  // applies to IPv4 packets
    bool ipv6 = true;  // applies to IPv6 packets
    uint8_t proto = 0;
    bool any_proto = true;
    IpPrefix src;  // length 0 = any
    IpPrefix dst;
    uint16_t sport_low = 0, sport_high = 65535;
    uint16_t dport_low = 0, dport_high = 65535;
    uint32_t prio = 0;
};

// Parses a whole rules file; throws LocatedError `file:line: message` at the first mistake.
std::vector<AclRule> parse_acl_rules(const RuleFile& file);

// The mark an `acl` mark rule set on `m`; false when it has none.
bool packet_mark(const rte_mbuf* m, uint32_t& mark);

class Acl final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 2.5;  // classifies the 5-tuple of every packet

    explicit Acl(const ParamValues& params);
    // Reads the rules file: every mistake is `file:line: message`, before EAL starts.
    static void check_params(const ParamValues& params);
    ~Acl() override;

    // EAL memory the classifiers take, estimated from the rule count (measured: under 1 KiB per
    // rule for random 5-tuples; 2 KiB are asked); 0 when the file cannot be read.
    static uint64_t memory_hint(const ParamValues& params);

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    // After open(): the rules in file order, and how often each won its group.
    const std::vector<AclRule>& rules() const { return rules_; }
    const std::vector<uint64_t>& rule_hits() const { return hits_; }

private:
    void build(const std::string& name, bool ipv6, int socket);
    void destroy();

    ParamValues params_;
    bool default_deny_;
    std::vector<AclRule> rules_;
    std::vector<uint64_t> hits_;  // per rule, written by the tile running the stage
    rte_acl_ctx* v4_ = nullptr;   // null when no rule applies to IPv4
    rte_acl_ctx* v6_ = nullptr;

    uint16_t denied_;
    uint16_t default_denied_;
    uint16_t counted_;
    uint16_t marked_;
    uint16_t not_ip_;
};

}  // namespace tp
