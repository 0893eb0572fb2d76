#include "stages/rewrite.hpp"

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "descriptors/wire_format.hpp"
#include "framework/rules/rule_file.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {

using namespace wire;


// Headers sit at any alignment; memcpy keeps the loads legal and the compiler fuses them.
inline uint16_t load16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline void store16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// Writes the `n` (even) bytes of `to` over `field` and folds the change into the checksum at
// `sum_a` and, when not null, `sum_b`.
void replace(uint8_t* field, const uint8_t* to, size_t n, uint16_t& sum_a, uint16_t* sum_b) {
    for (size_t i = 0; i < n; i += 2) {
        const uint16_t before = load16(field + i);
        const uint16_t after = load16(to + i);
        sum_a = checksum_adjust(sum_a, before, after);
        if (sum_b != nullptr) *sum_b = checksum_adjust(*sum_b, before, after);
    }
    std::memcpy(field, to, n);
}

}  // namespace

// What `parse` found about a packet, read once for matching and rewriting.
struct Rewrite::View {
    rte_mbuf* m;
    uint8_t* frame;
    uint8_t* ip;
    bool v4, v6;   // a whole header of that family
    bool has_l4;   // a whole TCP/UDP header (parse sets l4_len only then; never for a later fragment)
    bool icmp6;    // a whole ICMPv6 header: its checksum covers the IPv6 addresses too
    uint8_t l4;
};

namespace {

using View = Rewrite::View;

View view_of(const PacketDesc& d) {
    View v;
    v.m = d.mbuf;
    v.frame = rte_pktmbuf_mtod(v.m, uint8_t*);
    v.ip = v.frame + v.m->l2_len;
    const bool parsed = (d.type & ptype::kParsed) != 0 && v.m->l3_len != 0;
    const uint8_t l3 = d.type & ptype::kL3Mask;
    v.l4 = d.type & ptype::kL4Mask;
    v.v4 = parsed && l3 == ptype::kL3Ipv4;
    v.v6 = parsed && l3 == ptype::kL3Ipv6;
    v.has_l4 = (v.v4 || v.v6) && v.m->l4_len != 0 && (v.l4 == ptype::kL4Tcp || v.l4 == ptype::kL4Udp);
    v.icmp6 = v.v6 && v.m->l4_len != 0 && v.l4 == ptype::kL4Icmp;
    return v;
}

bool in_prefix(const uint8_t* addr, const std::array<uint8_t, 16>& net, const std::array<uint8_t, 16>& mask, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if ((addr[i] & mask[i]) != net[i]) return false;
    return true;
}

bool matches(const RewriteRule& r, const View& v) {
    if (r.family == 4 && !v.v4) return false;
    if (r.family == 6 && !v.v6) return false;
    const size_t n = r.family == 6 ? 16 : 4;
    if (r.match_src && !in_prefix(v.ip + (r.family == 6 ? kIpv6Source : kIpv4Source), r.src_net, r.src_mask, n))
        return false;
    if (r.match_dst &&
        !in_prefix(v.ip + (r.family == 6 ? kIpv6Destination : kIpv4Destination), r.dst_net, r.dst_mask, n))
        return false;
    if (r.l4 != 0 && v.l4 != r.l4) return false;
    if (r.match_ports) {
        if (!v.has_l4) return false;
        const uint8_t* l4h = v.ip + v.m->l3_len;
        const uint16_t sport = uint16_t(l4h[0] << 8 | l4h[1]), dport = uint16_t(l4h[2] << 8 | l4h[3]);
        if (sport < r.sport_lo || sport > r.sport_hi || dport < r.dport_lo || dport > r.dport_hi) return false;
    }
    return true;
}

// ---- rules from parameters and files ---------------------------------------------------------

// A field of a rule, `name` `text`; false with `why` when the value does not fit. `family`
// collects the family of the addresses set (0 none yet).
bool set_field(RewriteRule& r, int& family, const std::string& name, const std::string& text, std::string& why) {
    if (name == "src_mac" || name == "dst_mac") {
        auto& out = name == "src_mac" ? r.src_mac : r.dst_mac;
        if (!parse_mac_address(text, out, why)) return false;
        (name == "src_mac" ? r.set_src_mac : r.set_dst_mac) = true;
        return true;
    }
    if (name == "src_ip" || name == "dst_ip") {
        IpPrefix p;
        if (text.find('/') != std::string::npos || !parse_ip_prefix(text, p, why)) {
            why = "'" + text + "' is not an IPv4 or IPv6 address";
            return false;
        }
        const int f = p.ipv6 ? 6 : 4;
        if (family != 0 && family != f) {
            why = "src_ip and dst_ip must be of one family (IPv4 or IPv6)";
            return false;
        }
        family = f;
        auto& out = name == "src_ip" ? r.src_ip : r.dst_ip;
        if (p.ipv6) out = p.v6;
        else out = {uint8_t(p.v4 >> 24), uint8_t(p.v4 >> 16), uint8_t(p.v4 >> 8), uint8_t(p.v4)};
        (name == "src_ip" ? r.set_src_ip : r.set_dst_ip) = true;
        return true;
    }
    if (name == "src_port" || name == "dst_port") {
        uint64_t v = 0;
        if (!parse_decimal(text, 65535, v)) {
            why = "'" + name + "' must be a port 0-65535";
            return false;
        }
        std::array<uint8_t, 2>& out = name == "src_port" ? r.src_port : r.dst_port;
        out[0] = uint8_t(v >> 8);
        out[1] = uint8_t(v);
        (name == "src_port" ? r.set_src_port : r.set_dst_port) = true;
        return true;
    }
    why = "unknown field '" + name + "' (known: src_mac, dst_mac, src_ip, dst_ip, src_port, dst_port)";
    return false;
}

// The rule the parameters describe: it matches every packet; an address of the other family
// than the packet's is counted, not matched.
RewriteRule rule_from_params(const ParamValues& p, int& family) {
    RewriteRule r;
    for (const char* name : {"src_mac", "dst_mac", "src_ip", "dst_ip"}) {
        const std::string& text = p.get_string(name);
        std::string why;
        if (!text.empty() && !set_field(r, family, name, text, why)) p.fail(name, std::string("'") + name + "': " + why);
    }
    for (const char* name : {"src_port", "dst_port"}) {
        const int64_t v = p.get_int(name);
        if (v == -1) continue;
        std::string why;
        if (v < 0 || v > 65535 || !set_field(r, family, name, std::to_string(v), why))
            p.fail(name, std::string("'") + name + "' must be a port 0-65535, or -1 to leave it");
    }
    r.set_family = family;
    return r;
}

void prefix_bytes(const IpPrefix& p, std::array<uint8_t, 16>& net, std::array<uint8_t, 16>& mask) {
    std::array<uint8_t, 16> addr{};
    if (p.ipv6) addr = p.v6;
    else addr = {uint8_t(p.v4 >> 24), uint8_t(p.v4 >> 16), uint8_t(p.v4 >> 8), uint8_t(p.v4)};
    for (size_t i = 0; i < 16; ++i) {
        const int bits = std::clamp(int(p.length) - int(i) * 8, 0, 8);
        mask[i] = uint8_t(0xff00 >> bits);
        net[i] = addr[i] & mask[i];
    }
}

RewriteRule rule_from_line(const RuleFile& file, const RuleLine& line) {
    RewriteRule r;
    r.line = line.number;
    int family = 0;
    auto want_family = [&](int f, const std::string& what) {
        if (family != 0 && family != f)
            file.fail(line, what + " is IPv" + std::to_string(f) + " but the rule is IPv" + std::to_string(family) +
                                " already: a rule is of one family");
        family = f;
    };
    const auto& w = line.words;
    // A match or a field given twice: the first would silently lose to the second.
    std::set<std::string> matched, written;
    const auto once = [&](std::set<std::string>& seen, const std::string& what, const std::string& key) {
        if (!seen.insert(key).second) file.fail(line, what + " '" + key + "' given twice");
    };
    size_t i = 0;
    for (; i < w.size() && w[i] != "set"; i += 2) {
        if (i + 1 == w.size()) file.fail(line, "'" + w[i] + "' needs a value");
        const std::string &key = w[i], &val = w[i + 1];
        once(matched, "match", key);
        std::string why;
        if (key == "src" || key == "dst") {
            IpPrefix p;
            if (!parse_ip_prefix(val, p, why)) file.fail(line, key + ": " + why);
            want_family(p.ipv6 ? 6 : 4, key + " " + val);
            prefix_bytes(p, key == "src" ? r.src_net : r.dst_net, key == "src" ? r.src_mask : r.dst_mask);
            (key == "src" ? r.match_src : r.match_dst) = true;
        } else if (key == "proto") {
            if (val == "tcp") r.l4 = ptype::kL4Tcp;
            else if (val == "udp") r.l4 = ptype::kL4Udp;
            else if (val == "icmp") r.l4 = ptype::kL4Icmp;
            else file.fail(line, "proto '" + val + "': known are tcp, udp, icmp");
        } else if (key == "sport" || key == "dport") {
            uint16_t lo = 0, hi = 0;
            if (!parse_port_range(val, lo, hi, why)) file.fail(line, key + ": " + why);
            (key == "sport" ? r.sport_lo : r.dport_lo) = lo;
            (key == "sport" ? r.sport_hi : r.dport_hi) = hi;
            r.match_ports = true;
        } else {
            file.fail(line, "unknown match '" + key + "' (known: src, dst, proto, sport, dport; then set FIELD VALUE ...)");
        }
    }
    if (i == w.size()) file.fail(line, "no 'set': a rule is [match ...] set FIELD VALUE [FIELD VALUE ...]");
    if (i + 1 == w.size()) file.fail(line, "'set' names no field");
    int set_family = 0;
    for (++i; i < w.size(); i += 2) {
        if (i + 1 == w.size()) file.fail(line, "field '" + w[i] + "' needs a value");
        once(written, "field", w[i]);
        std::string why;
        if (!set_field(r, set_family, w[i], w[i + 1], why)) file.fail(line, w[i] + ": " + why);
    }
    if (set_family != 0) want_family(set_family, "the address set");
    r.family = family;
    r.set_family = set_family;
    return r;
}

}  // namespace

namespace {

// A comma-separated list of MACs, index = port (`port_macs`, `next_hop_macs`); empty when the
// parameter is "".
std::vector<std::array<uint8_t, 6>> mac_list(const ParamValues& p, const char* name) {
    std::vector<std::array<uint8_t, 6>> macs;
    const std::string& text = p.get_string(name);
    if (text.empty()) return macs;
    size_t at = 0;
    for (;;) {
        const size_t comma = text.find(',', at);
        std::string word = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        word.erase(0, word.find_first_not_of(" \t"));
        word.erase(word.find_last_not_of(" \t") + 1);
        const std::string port = "port " + std::to_string(macs.size());
        std::array<uint8_t, 6> mac{};
        std::string why;
        if (word.empty()) p.fail(name, std::string("'") + name + "' gives " + port + " no MAC (an empty entry)");
        if (!parse_mac_address(word, mac, why)) p.fail(name, std::string("'") + name + "' " + port + ": " + why);
        macs.push_back(mac);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    if (macs.size() > PacketDesc::kPortMax + 1u)
        p.fail(name, std::string("'") + name + "' lists " + std::to_string(macs.size()) + " ports; a port is 0-" +
                         std::to_string(PacketDesc::kPortMax));
    return macs;
}

// Everything the parameters say, checked: the rules and the per-port MAC tables.
struct RewriteConfig {
    std::vector<RewriteRule> rules;
    bool from_file = false;
    std::vector<std::array<uint8_t, 6>> port_src, port_dst;
};

RewriteConfig config_of(const ParamValues& params) {
    RewriteConfig c;
    int family = 0;
    RewriteRule fields = rule_from_params(params, family);
    c.port_src = mac_list(params, "port_macs");
    c.port_dst = mac_list(params, "next_hop_macs");
    if (!c.port_src.empty() && fields.set_src_mac)
        params.fail("port_macs", "'src_mac' and 'port_macs' both set the source MAC: give one");
    if (!c.port_dst.empty() && fields.set_dst_mac)
        params.fail("next_hop_macs", "'dst_mac' and 'next_hop_macs' both set the destination MAC: give one");
    if (!c.port_src.empty() && !c.port_dst.empty() && c.port_src.size() != c.port_dst.size())
        params.fail("next_hop_macs", "'next_hop_macs' lists " + std::to_string(c.port_dst.size()) +
                                         " ports but 'port_macs' " + std::to_string(c.port_src.size()) +
                                         ": one of each per port");
    const std::string& path = params.get_string("rules");
    if (path.empty()) {
        c.rules.push_back(fields);  // family stays 0: it matches every packet
        return c;
    }
    for (const char* name : {"src_mac", "dst_mac", "src_ip", "dst_ip"})
        if (params.given(name) && params.text(name) != "")
            params.fail(name, std::string("'") + name + "' and 'rules' both say what to write: put it in a rule");
    for (const char* name : {"src_port", "dst_port"})
        if (params.get_int(name) != -1)
            params.fail(name, std::string("'") + name + "' and 'rules' both say what to write: put it in a rule");
    const RuleFile file(path, params.where("rules"));
    for (const RuleLine& line : file.lines()) c.rules.push_back(rule_from_line(file, line));
    c.from_file = true;
    return c;
}

}  // namespace

void Rewrite::check_params(const ParamValues& params) { config_of(params); }

Rewrite::Rewrite(const ParamValues& params) : Stage(kKind) {
    check_params(params);
    RewriteConfig c = config_of(params);
    rules_ = std::move(c.rules);
    from_file_ = c.from_file;
    port_src_ = std::move(c.port_src);
    port_dst_ = std::move(c.port_dst);
    not_ipv4_ = declare_event("not_ipv4");
    not_ipv6_ = declare_event("not_ipv6");
    no_ports_ = declare_event("no_ports");
    unmatched_ = declare_event("unmatched");
    no_port_mac_ = declare_event("no_port_mac");
}

// The MACs of the packet's output port (l3fwd style); before any rule, which may override them.
void Rewrite::set_port_macs(const PacketDesc& d, const View& v) {
    if (rte_pktmbuf_data_len(v.m) < kEtherHeader) return;
    const uint8_t port = d.port;
    bool missing = false;
    if (!port_dst_.empty()) {
        if (port < port_dst_.size()) std::memcpy(v.frame, port_dst_[port].data(), 6);
        else missing = true;
    }
    if (!port_src_.empty()) {
        if (port < port_src_.size()) std::memcpy(v.frame + 6, port_src_[port].data(), 6);
        else missing = true;
    }
    if (missing) [[unlikely]] count_event(no_port_mac_);
}

void Rewrite::apply(const RewriteRule& r, const View& v) {
    if ((r.set_src_mac || r.set_dst_mac) && rte_pktmbuf_data_len(v.m) >= kEtherHeader) {
        if (r.set_dst_mac) std::memcpy(v.frame, r.dst_mac.data(), 6);
        if (r.set_src_mac) std::memcpy(v.frame + 6, r.src_mac.data(), 6);
    }
    const bool ips = r.set_src_ip || r.set_dst_ip;
    const bool ports = r.set_src_port || r.set_dst_port;
    if (!ips && !ports) return;

    uint8_t* l4_sum = v.has_l4  ? v.ip + v.m->l3_len + (v.l4 == ptype::kL4Tcp ? kTcpChecksum : kUdpChecksum)
                      : v.icmp6 ? v.ip + v.m->l3_len + kIcmpChecksum
                                : nullptr;
    uint16_t l4_check = l4_sum != nullptr ? load16(l4_sum) : 0;
    // A UDP checksum of 0 means "not computed": it stays so.
    if (l4_sum != nullptr && v.l4 == ptype::kL4Udp && l4_check == 0) l4_sum = nullptr;
    uint16_t unused = 0;
    uint16_t& pseudo = l4_sum != nullptr ? l4_check : unused;

    if (ips) {
        // Which family the rule's addresses are: IPv6 ones are 16 bytes, set only on IPv6.
        const bool six = r.set_family == 6;
        if (!six && v.v4) {
            uint16_t ip_check = load16(v.ip + kIpv4Checksum);
            if (r.set_src_ip) replace(v.ip + kIpv4Source, r.src_ip.data(), 4, ip_check, l4_sum != nullptr ? &l4_check : nullptr);
            if (r.set_dst_ip) replace(v.ip + kIpv4Destination, r.dst_ip.data(), 4, ip_check, l4_sum != nullptr ? &l4_check : nullptr);
            store16(v.ip + kIpv4Checksum, ip_check);
        } else if (six && v.v6) {
            // IPv6 has no header checksum: only the L4 pseudo-header sum follows.
            if (r.set_src_ip) replace(v.ip + kIpv6Source, r.src_ip.data(), 16, pseudo, nullptr);
            if (r.set_dst_ip) replace(v.ip + kIpv6Destination, r.dst_ip.data(), 16, pseudo, nullptr);
        } else {
            count_event(six ? not_ipv6_ : not_ipv4_);
        }
    }
    if (ports) {
        if (v.has_l4) {
            uint8_t* l4h = v.ip + v.m->l3_len;
            if (r.set_src_port) replace(l4h, r.src_port.data(), 2, pseudo, nullptr);
            if (r.set_dst_port) replace(l4h + 2, r.dst_port.data(), 2, pseudo, nullptr);
        } else {
            count_event(no_ports_);
        }
    }
    if (l4_sum != nullptr) {
        if (v.l4 == ptype::kL4Udp && l4_check == 0) l4_check = 0xffff;  // RFC 768
        store16(l4_sum, l4_check);
    }
}

void Rewrite::process(Burst& b) {
    const uint16_t n = b.n;
    const bool by_port = !port_src_.empty() || !port_dst_.empty();
    for (uint16_t i = 0; i < n; ++i) {
        if (i + 1 < n) {
            rte_prefetch0(RTE_PTR_ADD(b.d[i + 1].mbuf, RTE_CACHE_LINE_SIZE));
            rte_prefetch0(rte_pktmbuf_mtod(b.d[i + 1].mbuf, const void*));
        }
        const View v = view_of(b.d[i]);
        if (by_port) set_port_macs(b.d[i], v);
        if (!from_file_) {
            apply(rules_.front(), v);
            continue;
        }
        const RewriteRule* hit = nullptr;
        for (const RewriteRule& r : rules_)
            if (matches(r, v)) {
                hit = &r;
                break;
            }
        if (hit != nullptr) apply(*hit, v);
        else count_event(unmatched_);
    }
}

TILEPIPE_STAGE(Rewrite, "rewrite",
               "set MAC, IPv4/IPv6 address and TCP/UDP port fields, on every packet or by NAT-style "
               "rules, keeping checksums valid (RFC 1624 incremental updates)",
               param<std::string>("src_mac", "", "Ethernet source to write (aa:bb:cc:dd:ee:ff); \"\" = keep"),
               param<std::string>("dst_mac", "", "Ethernet destination to write; \"\" = keep"),
               param<std::string>("port_macs", "",
                                  "source MAC per output port, port 0 first, comma-separated (each port's own "
                                  "address, as l3fwd takes it from the NIC); not with src_mac; \"\" = none"),
               param<std::string>("next_hop_macs", "",
                                  "destination MAC per output port, port 0 first, comma-separated (the next hop "
                                  "behind each port, l3fwd's --eth-dest); not with dst_mac; \"\" = none"),
               param<std::string>("src_ip", "",
                                  "source address to write, IPv4 or IPv6, on packets of its family (IP and "
                                  "TCP/UDP checksums follow); \"\" = keep"),
               param<std::string>("dst_ip", "", "destination address to write, IPv4 or IPv6; \"\" = keep"),
               param<int64_t>("src_port", -1, "TCP/UDP source port to write (0-65535); -1 = keep"),
               param<int64_t>("dst_port", -1, "TCP/UDP destination port to write; -1 = keep"),
               param<std::string>("rules", "",
                                  "rules file: per line [src P] [dst P] [proto tcp|udp|icmp] [sport R] [dport R] "
                                  "set FIELD VALUE ...; the first match rewrites; \"\" = the fields above, on every packet").input_file());

}  // namespace tp
