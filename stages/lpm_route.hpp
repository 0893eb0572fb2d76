// LpmRoute (`lpm_route`): longest-prefix-match forwarding with DPDK's rte_lpm and rte_lpm6.
//
// Synopsis
//   - { stage: lpm_route, routes: conf/data/routes.txt, default_port: -1 }
//
// Parameters
//   routes        routes file (syntax below)                                      required
//   default_port  output port for IP packets no route covers; -1 = drop them     default -1
//                 as `no_route`
//   outputs       single: every packet it keeps leaves by `out` (the port in its default single
//                 descriptor, for port_out / pcap_out %p); per_port: one output per port
//                 the routes (and default_port) name, `port0`, `port3`, ... in port
//                 order, plus `no_route` when default_port is -1: packets no route covers
//                 leave there instead of being dropped
//
// Routes file: one route per line, `#` comments:
//
//   PREFIX/LEN  PORT          10.0.0.0/8  1      2001:db8::/32  3      0.0.0.0/0  0
//
// PREFIX is IPv4 or IPv6 (a bare address is a host route, /32 or /128; 0.0.0.0/0 and ::/0 are
// the default routes of their family); its bits beyond LEN must be zero. PORT is 0-255 (the descriptor's port is 8 bits). A prefix may be routed once.
// Any mistake is a LocatedError `file:line: message` raised by open(), before traffic.
//
// Per packet (after `parse`, whose header offsets it reads), in this order:
//   1. no whole IPv4/IPv6 header (ARP, MPLS, malformed, not parsed): dropped as `not_ip`;
//   2. the destination address is looked up (rte_lpm_lookup_bulk / rte_lpm6_lookup_bulk_func
//      over the burst); a miss takes the family's /0 route if the file has one, else goes to
//      `default_port` (event `default_route`) or is dropped as `no_route`;
//   3. TTL / hop limit: a packet arriving with 1 or 0 would leave with 0, so it is dropped as
//      `ttl_exceeded` (no ICMP error is sent); otherwise it is decremented, and the IPv4 header
//      checksum is updated incrementally (RFC 1624), so a valid checksum stays valid and a
//      wrong one stays wrong (the checksum is not verified);
//   4. the port is written to the descriptor (`port`) and to mbuf->port; `rewrite` (port_macs,
//      next_hop_macs), `port_out` (devices) and `pcap_out` (%p) act on it; with
//      `outputs: per_port` the packet also leaves by that port's output.
// Memory: rte_lpm and rte_lpm6 each have a 64 MiB first-level table; memory_hint() asks EAL
// for them. Only the TTL / hop-limit byte and the IPv4 checksum are written; nothing beyond the IP header
// is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "tilepipe/registration.hpp"
#include "framework/stage/stage.hpp"
#include "framework/rules/rule_file.hpp"

struct rte_lpm;
struct rte_lpm6;

namespace tp {

struct Route {
    int line = 0;  // in the routes file
    IpPrefix prefix;
    uint8_t port = 0;
};

// Parses a whole routes file; throws LocatedError `file:line: message` at the first mistake.
std::vector<Route> parse_routes(const RuleFile& file);
// The ports `outputs: per_port` gives an output, ascending: those the routes name, and
// default_port unless -1.
std::vector<uint8_t> routed_ports(const std::vector<Route>& routes, int default_port);

class LpmRoute final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;

    explicit LpmRoute(const ParamValues& params);
    // Reads the routes file: every mistake is `file:line: message`, before EAL starts.
    static void check_params(const ParamValues& params);
    ~LpmRoute() override;

    // EAL memory the tables take (each family with routes has a 64 MiB first level); 0 when
    // the routes file cannot be read (open() then says why).
    static uint64_t memory_hint(const ParamValues& params);
    // `out`, or with outputs: per_port `port<N>` per routed port (and `no_route`).
    static std::vector<OutputSpec> outputs(const ParamValues& params);
    static std::string stage_notes();

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    const std::vector<Route>& routes() const { return routes_; }  // after open()

private:
    void destroy();

    ParamValues params_;
    int default_port_;  // -1: none
    std::vector<Route> routes_;
    rte_lpm* v4_ = nullptr;    // null when no IPv4 route longer than /0
    rte_lpm6* v6_ = nullptr;
    int32_t v4_default_ = -1;  // port of 0.0.0.0/0, -1 none (rte_lpm takes depths from 1)
    int32_t v6_default_ = -1;  // port of ::/0

    uint16_t not_ip_;
    uint16_t no_route_;
    uint16_t ttl_exceeded_;
    uint16_t default_route_;  // event
    bool per_port_;
    uint8_t output_of_port_[PacketDesc::kPortMax + 1] = {};  // per_port: a port's output index
    uint8_t no_route_output_ = 0;                            // per_port, default_port -1
};

}  // namespace tp
