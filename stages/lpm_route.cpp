#include "stages/lpm_route.hpp"

#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>

#include "descriptors/wire_format.hpp"
#include "framework/stage/registry.hpp"
#include "stages/rewrite.hpp"

namespace tp {

namespace {

using namespace wire;


constexpr int32_t kNotIp = -2;  // per-packet lookup outcome besides a port
constexpr int32_t kMiss = -1;

std::atomic<uint32_t> lpm_serial{0};

// Routes and tbl8 groups each table needs (a /0 route lives outside the tables).
struct TableSizes {
    uint32_t v4_routes = 0, v6_routes = 0;
    uint32_t v4_tbl8 = 0, v6_tbl8 = 0;
};

TableSizes table_sizes(const std::vector<Route>& routes) {
    constexpr uint32_t kSpareTbl8 = 16;
    TableSizes t;
    for (const Route& r : routes) {
        const uint32_t len = r.prefix.length;
        if (len == 0) continue;
        if (r.prefix.ipv6) {
            ++t.v6_routes;
            t.v6_tbl8 += len > 24 ? (len - 24 + 7) / 8 : 0;  // one group per byte past /24
        } else {
            ++t.v4_routes;
            t.v4_tbl8 += len > 24;  // one group per /24 holding longer prefixes, at most
        }
    }
    t.v4_tbl8 += kSpareTbl8;
    t.v6_tbl8 += kSpareTbl8;
    return t;
}

Route parse_route(const RuleFile& file, const RuleLine& line) {
    const auto& w = line.words;
    if (w.size() != 2)
        file.fail(line, "expected 'PREFIX/LEN PORT', got " + std::to_string(w.size()) + " word" +
                            (w.size() == 1 ? "" : "s"));
    Route r;
    r.line = line.number;
    std::string why;
    if (!parse_ip_prefix(w[0], r.prefix, why)) file.fail(line, "bad prefix: " + why);
    uint64_t port = 0;
    if (!parse_decimal(w[1], PacketDesc::kPortMax, port))
        file.fail(line, "bad port '" + w[1] + "': expected 0-" + std::to_string(PacketDesc::kPortMax));
    r.port = static_cast<uint8_t>(port);
    return r;
}

}  // namespace

std::vector<Route> parse_routes(const RuleFile& file) {
    std::vector<Route> routes;
    std::map<std::string, int> seen;  // prefix -> line
    for (const RuleLine& line : file.lines()) {
        Route r = parse_route(file, line);
        const auto [it, fresh] = seen.emplace(r.prefix.str(), r.line);
        if (!fresh)
            file.fail(line, "prefix " + r.prefix.str() + " is already routed at line " +
                                std::to_string(it->second));
        routes.push_back(r);
    }
    return routes;
}

std::vector<uint8_t> routed_ports(const std::vector<Route>& routes, int default_port) {
    std::vector<uint8_t> ports;
    for (const Route& r : routes) ports.push_back(r.port);
    if (default_port >= 0) ports.push_back(static_cast<uint8_t>(default_port));
    std::sort(ports.begin(), ports.end());
    ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
    return ports;
}

std::vector<OutputSpec> LpmRoute::outputs(const ParamValues& params) {
    if (params.get_string("outputs") != "per_port") return single_output();
    const auto routes = parse_routes(RuleFile(params.get_string("routes"), params.where("routes")));
    const int default_port = static_cast<int>(params.get_int("default_port"));
    std::vector<OutputSpec> outs;
    for (uint8_t p : routed_ports(routes, default_port))
        outs.push_back(OutputSpec{"port" + std::to_string(p), "packets routed to port " + std::to_string(p)});
    if (default_port < 0) outs.push_back(OutputSpec{"no_route", "IP packets no route covers"});
    return outs;
}

void LpmRoute::check_params(const ParamValues& params) {
    parse_routes(RuleFile(params.get_string("routes"), params.where("routes")));
}

LpmRoute::LpmRoute(const ParamValues& params)
    : Stage(kKind), params_(params), default_port_(static_cast<int>(params.get_int("default_port"))),
      per_port_(params.get_string("outputs") == "per_port") {
    not_ip_ = declare_drop("not_ip");
    no_route_ = declare_drop("no_route");
    ttl_exceeded_ = declare_drop("ttl_exceeded");
    default_route_ = declare_event("default_route");
}

LpmRoute::~LpmRoute() { destroy(); }

uint64_t LpmRoute::memory_hint(const ParamValues& params) {
    std::vector<Route> routes;
    try {
        routes = parse_routes(RuleFile(params.get_string("routes"), params.where("routes")));
    } catch (const std::exception&) {
        return 0;  // open() reports why
    }
    // Both tables have a 2^24-entry first level of 4-byte entries; second-level groups are
    // 256 entries of 4 bytes; rules and rte_lpm6's rule hash are small next to them.
    constexpr uint64_t kTbl24 = (uint64_t(1) << 24) * 4;
    constexpr uint64_t kTbl8Group = 256 * 4;
    constexpr uint64_t kPerRule = 64;
    constexpr uint64_t kSlack = 4ull << 20;
    const TableSizes t = table_sizes(routes);
    uint64_t bytes = 0;
    if (t.v4_routes != 0) bytes += kTbl24 + t.v4_tbl8 * kTbl8Group + t.v4_routes * kPerRule + kSlack;
    if (t.v6_routes != 0) bytes += kTbl24 + t.v6_tbl8 * kTbl8Group + t.v6_routes * kPerRule + kSlack;
    return bytes;
}

void LpmRoute::destroy() {
    if (v4_ != nullptr) rte_lpm_free(v4_);
    if (v6_ != nullptr) rte_lpm6_free(v6_);
    v4_ = nullptr;
    v6_ = nullptr;
}

void LpmRoute::open(StageEnv& env) {
    destroy();
    const std::string& path = params_.get_string("routes");
    const RuleFile file(path, params_.where("routes"));
    routes_ = parse_routes(file);

    const TableSizes size = table_sizes(routes_);
    const uint32_t v4_routes = size.v4_routes, v6_routes = size.v6_routes;
    v4_default_ = v6_default_ = kMiss;
    auto fail = [&](const std::string& what, int err) {
        params_.fail("routes", "cannot build the routing table for '" + path + "': " + what + " (" +
                                   rte_strerror(err) + ")");
    };
    const uint32_t serial = lpm_serial++;
    if (v4_routes != 0) {
        const std::string name = "tp_lpm4_" + std::to_string(serial);
        const rte_lpm_config cfg{v4_routes, size.v4_tbl8, 0};
        v4_ = rte_lpm_create(name.c_str(), env.socket, &cfg);
        if (v4_ == nullptr) fail("rte_lpm_create failed", rte_errno);
    }
    if (v6_routes != 0) {
        const std::string name = "tp_lpm6_" + std::to_string(serial);
        const rte_lpm6_config cfg{v6_routes, size.v6_tbl8, 0};
        v6_ = rte_lpm6_create(name.c_str(), env.socket, &cfg);
        if (v6_ == nullptr) fail("rte_lpm6_create failed", rte_errno);
    }
    for (const Route& r : routes_) {
        IpPrefix p = r.prefix;
        if (p.length == 0) {  // rte_lpm and rte_lpm6 take depths from 1: kept aside
            (p.ipv6 ? v6_default_ : v4_default_) = r.port;
            continue;
        }
        const int rc = p.ipv6 ? rte_lpm6_add(v6_, p.v6.data(), p.length, r.port)
                              : rte_lpm_add(v4_, p.v4, p.length, r.port);
        if (rc < 0)
            throw LocatedError(file.where(RuleLine{r.line, {}}),
                               "cannot add route " + p.str() + ": " + rte_strerror(-rc));
    }
    if (per_port_) {  // outputs(): routed ports ascending, then no_route
        const std::vector<uint8_t> ports = routed_ports(routes_, default_port_);
        for (size_t o = 0; o < ports.size(); ++o) output_of_port_[ports[o]] = static_cast<uint8_t>(o);
        no_route_output_ = static_cast<uint8_t>(ports.size());
    }
    spdlog::debug("{}: {} IPv4 and {} IPv6 routes from {}", env.node_name, v4_routes, v6_routes, path);
}

void LpmRoute::process(Burst& b) {
    const uint16_t n = b.n;
    uint32_t dst4[kBurstMax];
    uint32_t hop4[kBurstMax];
    uint16_t at4[kBurstMax];
    uint8_t dst6[kBurstMax][16];
    int32_t hop6[kBurstMax];
    uint16_t at6[kBurstMax];
    int32_t port[kBurstMax];
    uint16_t n4 = 0, n6 = 0;

    for (uint16_t i = 0; i < n; ++i) {
        if (i + 1 < n) rte_prefetch0(RTE_PTR_ADD(b.d[i + 1].mbuf, RTE_CACHE_LINE_SIZE));
        const PacketDesc& d = b.d[i];
        const rte_mbuf* m = d.mbuf;
        const uint8_t l3 = d.type & ptype::kL3Mask;
        port[i] = kMiss;
        if (!(d.type & ptype::kParsed) || m->l3_len == 0 ||
            (l3 != ptype::kL3Ipv4 && l3 != ptype::kL3Ipv6)) [[unlikely]] {
            port[i] = kNotIp;
            continue;
        }
        const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
        if (l3 == ptype::kL3Ipv4) {
            const uint8_t* a = ip + kIpv4Destination;
            dst4[n4] = uint32_t(a[0]) << 24 | uint32_t(a[1]) << 16 | uint32_t(a[2]) << 8 | a[3];
            at4[n4++] = i;
        } else {
            std::memcpy(dst6[n6], ip + kIpv6Destination, 16);
            at6[n6++] = i;
        }
    }
    if (n4 != 0) {
        if (v4_ != nullptr) rte_lpm_lookup_bulk(v4_, dst4, hop4, n4);
        for (uint16_t j = 0; j < n4; ++j)
            port[at4[j]] = v4_ != nullptr && (hop4[j] & RTE_LPM_LOOKUP_SUCCESS)
                               ? int32_t(hop4[j] & 0x00ffffff)
                               : v4_default_;
    }
    if (n6 != 0) {
        if (v6_ != nullptr) rte_lpm6_lookup_bulk_func(v6_, dst6, hop6, n6);
        for (uint16_t j = 0; j < n6; ++j)
            port[at6[j]] = v6_ != nullptr && hop6[j] >= 0 ? hop6[j] : v6_default_;
    }

    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
        PacketDesc d = b.d[i];
        int32_t out = port[i];
        if (out == kNotIp) [[unlikely]] {
            drop(d, not_ip_);
            continue;
        }
        if (out == kMiss) {
            if (default_port_ < 0 && per_port_) {  // its own output: leaves as it came
                set_output(kept, no_route_output_);
                b.d[kept++] = d;
                continue;
            }
            if (default_port_ < 0) {
                drop(d, no_route_);
                continue;
            }
            out = default_port_;
            count_event(default_route_);
        }
        rte_mbuf* m = d.mbuf;
        uint8_t* ip = rte_pktmbuf_mtod_offset(m, uint8_t*, m->l2_len);
        if ((d.type & ptype::kL3Mask) == ptype::kL3Ipv4) {
            const uint8_t ttl = ip[kIpv4Ttl];
            if (ttl <= 1) {
                drop(d, ttl_exceeded_);
                continue;
            }
            // TTL shares a 16-bit word with the protocol byte: that word drops by 0x0100.
            const uint16_t word = static_cast<uint16_t>(ttl << 8 | ip[kIpv4Ttl + 1]);
            const uint16_t sum = static_cast<uint16_t>(ip[kIpv4Checksum] << 8 | ip[kIpv4Checksum + 1]);
            const uint16_t fixed = checksum_adjust(sum, word, static_cast<uint16_t>(word - 0x0100));
            ip[kIpv4Ttl] = static_cast<uint8_t>(ttl - 1);
            ip[kIpv4Checksum] = static_cast<uint8_t>(fixed >> 8);
            ip[kIpv4Checksum + 1] = static_cast<uint8_t>(fixed);
        } else {
            if (ip[kIpv6HopLimit] <= 1) {
                drop(d, ttl_exceeded_);
                continue;
            }
            --ip[kIpv6HopLimit];
        }
        d.port = static_cast<uint8_t>(out);
        m->port = static_cast<uint16_t>(out);
        if (per_port_) set_output(kept, output_of_port_[out]);
        b.d[kept++] = d;
    }
    b.n = kept;
}

void LpmRoute::close() { destroy(); }

std::string LpmRoute::stage_notes() {
    return "  outputs: out (single); with outputs: per_port, portN for each port the routes (and default_port)\n"
           "  name, ascending, and no_route when default_port is -1 (unrouted IP packets leave there, unchanged,\n"
           "  instead of being dropped); not_ip and ttl_exceeded stay counted drops\n";
}

TILEPIPE_STAGE(LpmRoute, "lpm_route",
               "longest-prefix-match routing (rte_lpm/rte_lpm6): sets the output "
               "port, decrements TTL/hop limit, fixes the IPv4 checksum",
               param<std::string>("routes", required,
                                  "routes file: one 'PREFIX/LEN PORT' per line (IPv4 or IPv6, "
                                  "port 0-127), '#' comments").input_file(),
               param<int64_t>("default_port", -1,
                              "port for IP packets no route covers; -1 = drop them as "
                              "\"no_route\"")
                   .between(-1, PacketDesc::kPortMax),
               param<std::string>("outputs", "single",
                                  "single: one output, `out`; per_port: an output `portN` per port "
                                  "the routes name (and `no_route` when default_port is -1)",
                                  {"single", "per_port"}));

}  // namespace tp
