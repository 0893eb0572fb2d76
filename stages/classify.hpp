// Classify (`classify`): sends each packet to the output of the first match it passes, like
// Click's Classifier / IPClassifier; a packet no match takes leaves by `default`.
//
// Synopsis
//   - stage: classify
//     name: cls
//     matches: |
//       web: tcp port 80 or tcp port 443     # a tcpdump filter expression
//       dns: proto=udp port=53               # a field match
//       ipv6: ethertype=ipv6
//     next: {web: websink, dns: dnssink, ipv6: v6sink, default: drop}
//
// Parameters
//   matches  the matches in order, `NAME: SPEC` per line (or separated by ';')   required
//
// Outputs: one per match, by its NAME, in order, then `default`. Nothing is dropped.
//
// A SPEC is a field match when every word of it is FIELD=VALUE with a FIELD below; all of its
// words must hold. Field matches read the frame and what `parse` found (put `parse` first):
//   ethertype=V   the EtherType after any VLAN tags (number, or ipv4, ipv6, arp)
//   vlan=ID       the outermost 802.1Q / 802.1ad tag's VLAN id (a packet with no tag fails)
//   proto=P       IP protocol: tcp, udp, icmp (ICMPv6 for IPv6), or a number (the IPv4
//                 header's protocol, the IPv6 header's next header)
//   port=N        TCP or UDP source or destination port (a non-first fragment has none)
//   src_port=N, dst_port=N   one of them
// Any other SPEC is a tcpdump filter expression (pcap-filter(7)), compiled once when the
// stage is built, with libpcap as tcpdump compiles it for an Ethernet capture
// (pcap_open_dead(DLT_EN10MB, 262144), optimised, netmask unknown), and run per packet by
// libpcap's bpf_filter over the packet's first segment, with the wire length as `len`: the
// same verdicts as `tcpdump -r FILE EXPR`. An expression libpcap refuses is refused at its line.
// A packet is tried against the matches in order; the first that holds wins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"
#include "tilepipe/registration.hpp"

struct bpf_program;

namespace tp {

// One match as written: its name and either a field test or a filter expression.
struct ClassifyMatch {
    std::string name;
    bool fields = false;   // a field match (below), else `expr`
    std::string expr;      // the tcpdump expression
    int32_t ethertype = -1, vlan = -1, proto = -1, port = -1, src_port = -1, dst_port = -1;  // -1: any
    bool icmp = false;     // proto=icmp: 1 for IPv4, 58 (ICMPv6) for IPv6
};

// Parses `matches` (LocatedError at the parameter, naming the line): names unique, valid,
// not `default`; at least one match.
std::vector<ClassifyMatch> parse_matches(const std::string& text, const Location& where);

class Classify final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 0.5;

    explicit Classify(const ParamValues& params);
    ~Classify() override;
    // Parses the matches and compiles every expression: `validate` refuses a bad one.
    static void check_params(const ParamValues& params);
    // One per match, then `default`.
    static std::vector<OutputSpec> outputs(const ParamValues& params);
    static std::string stage_notes();

    void open(StageEnv& env) override;
    void process(Burst& b) override;

private:
    uint8_t classify(const PacketDesc& d) const;
    bool fields_hold(const ClassifyMatch& m, const PacketDesc& d) const;

    std::vector<ClassifyMatch> matches_;
    std::vector<bpf_program*> programs_;  // per match: libpcap's program (nullptr: a field match)
    int wire_offset_ = -1;                // the wire-length dynfield (bpf_filter's `len`)
};

}  // namespace tp
