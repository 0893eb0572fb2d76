#include "stages/rewrite.hpp"

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <cstring>

#include "framework/stage/registry.hpp"
#include "stages/rule_file.hpp"

namespace tp {

namespace {

constexpr uint32_t kEtherHeader = 14;
constexpr uint32_t kIpv4Checksum = 10;  // offsets in the IPv4 header
constexpr uint32_t kIpv4Source = 12;
constexpr uint32_t kIpv4Destination = 16;
constexpr uint32_t kTcpChecksum = 16;   // offsets in the L4 header
constexpr uint32_t kUdpChecksum = 6;

// Headers sit at any alignment; memcpy keeps the loads legal and the compiler fuses them.
inline uint16_t load16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline void store16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

// Writes `to` over the `N` bytes at `field` and folds the change into the checksums at `sum_a`
// and, when not null, `sum_b`.
template <size_t N>
void replace(uint8_t* field, const std::array<uint8_t, N>& to, uint16_t& sum_a, uint16_t* sum_b) {
    static_assert(N % 2 == 0);
    for (size_t i = 0; i < N; i += 2) {
        const uint16_t before = load16(field + i);
        const uint16_t after = load16(to.data() + i);
        sum_a = checksum_adjust(sum_a, before, after);
        if (sum_b != nullptr) *sum_b = checksum_adjust(*sum_b, before, after);
    }
    std::memcpy(field, to.data(), N);
}

void parse_mac_param(const ParamValues& p, const char* name, bool& set, std::array<uint8_t, 6>& out) {
    const std::string& text = p.get_string(name);
    if (text.empty()) return;
    std::string why;
    if (!parse_mac_address(text, out, why)) p.fail(name, std::string("'") + name + "': " + why);
    set = true;
}

void parse_ip_param(const ParamValues& p, const char* name, bool& set, std::array<uint8_t, 4>& out) {
    const std::string& text = p.get_string(name);
    if (text.empty()) return;
    uint32_t host = 0;
    std::string why;
    if (!parse_ipv4_address(text, host, why)) {
        IpPrefix v6;
        if (parse_ip_prefix(text, v6, why) && v6.ipv6)
            p.fail(name, std::string("'") + name + "': only IPv4 addresses can be set, got '" + text + "'");
        p.fail(name, std::string("'") + name + "': '" + text + "' is not an IPv4 address");
    }
    out = {uint8_t(host >> 24), uint8_t(host >> 16), uint8_t(host >> 8), uint8_t(host)};
    set = true;
}

void parse_port_param(const ParamValues& p, const char* name, bool& set, std::array<uint8_t, 2>& out) {
    const int64_t v = p.get_int(name);
    if (v == -1) return;
    if (v < 0 || v > 65535)
        p.fail(name, std::string("'") + name + "' must be a port 0-65535, or -1 to leave it");
    out = {uint8_t(v >> 8), uint8_t(v)};
    set = true;
}

}  // namespace

Rewrite::Rewrite(const ParamValues& params) : Stage(kKind) {
    parse_mac_param(params, "src_mac", set_src_mac_, src_mac_);
    parse_mac_param(params, "dst_mac", set_dst_mac_, dst_mac_);
    parse_ip_param(params, "src_ip", set_src_ip_, src_ip_);
    parse_ip_param(params, "dst_ip", set_dst_ip_, dst_ip_);
    parse_port_param(params, "src_port", set_src_port_, src_port_);
    parse_port_param(params, "dst_port", set_dst_port_, dst_port_);
    not_ipv4_ = declare_event("not_ipv4");
    no_ports_ = declare_event("no_ports");
}

void Rewrite::process(Burst& b) {
    const bool macs = set_src_mac_ || set_dst_mac_;
    const bool ips = set_src_ip_ || set_dst_ip_;
    const bool ports = set_src_port_ || set_dst_port_;
    const uint16_t n = b.n;
    for (uint16_t i = 0; i < n; ++i) {
        if (i + 1 < n) {
            rte_prefetch0(RTE_PTR_ADD(b.d[i + 1].mbuf, RTE_CACHE_LINE_SIZE));
            rte_prefetch0(rte_pktmbuf_mtod(b.d[i + 1].mbuf, const void*));
        }
        const PacketDesc& d = b.d[i];
        rte_mbuf* m = d.mbuf;
        uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
        if (macs && rte_pktmbuf_data_len(m) >= kEtherHeader) {
            if (set_dst_mac_) std::memcpy(frame, dst_mac_.data(), 6);
            if (set_src_mac_) std::memcpy(frame + 6, src_mac_.data(), 6);
        }
        if (!ips && !ports) continue;

        const bool parsed = (d.type & ptype::kParsed) != 0 && m->l3_len != 0;
        const uint8_t l3 = d.type & ptype::kL3Mask;
        const uint8_t l4 = d.type & ptype::kL4Mask;
        uint8_t* ip = frame + m->l2_len;
        // A whole TCP/UDP header (parse sets l4_len only then; never for a non-first fragment).
        const bool has_l4 = parsed && m->l4_len != 0 && (l4 == ptype::kL4Tcp || l4 == ptype::kL4Udp) &&
                            (l3 == ptype::kL3Ipv4 || l3 == ptype::kL3Ipv6);
        uint8_t* l4_sum = has_l4 ? ip + m->l3_len + (l4 == ptype::kL4Tcp ? kTcpChecksum : kUdpChecksum)
                                 : nullptr;
        uint16_t l4_check = l4_sum != nullptr ? load16(l4_sum) : 0;
        // A UDP checksum of 0 means "not computed": it stays so.
        if (l4_sum != nullptr && l4 == ptype::kL4Udp && l4_check == 0) l4_sum = nullptr;

        if (ips) {
            if (parsed && l3 == ptype::kL3Ipv4) {
                uint16_t ip_check = load16(ip + kIpv4Checksum);
                uint16_t* pseudo = l4_sum != nullptr ? &l4_check : nullptr;
                if (set_src_ip_) replace(ip + kIpv4Source, src_ip_, ip_check, pseudo);
                if (set_dst_ip_) replace(ip + kIpv4Destination, dst_ip_, ip_check, pseudo);
                store16(ip + kIpv4Checksum, ip_check);
            } else {
                count_event(not_ipv4_);
            }
        }
        if (ports) {
            if (has_l4) {
                uint8_t* l4h = ip + m->l3_len;
                uint16_t unused = 0;
                uint16_t& sum = l4_sum != nullptr ? l4_check : unused;
                if (set_src_port_) replace(l4h, src_port_, sum, nullptr);
                if (set_dst_port_) replace(l4h + 2, dst_port_, sum, nullptr);
            } else {
                count_event(no_ports_);
            }
        }
        if (l4_sum != nullptr) {
            if (l4 == ptype::kL4Udp && l4_check == 0) l4_check = 0xffff;  // RFC 768
            store16(l4_sum, l4_check);
        }
    }
}

TILEPIPE_STAGE(Rewrite, "rewrite",
               "set MAC, IPv4 address and TCP/UDP port fields (NAT style), keeping "
               "checksums valid (RFC 1624 incremental updates)",
               param<std::string>("src_mac", "", "Ethernet source to write (aa:bb:cc:dd:ee:ff); \"\" = keep"),
               param<std::string>("dst_mac", "", "Ethernet destination to write; \"\" = keep"),
               param<std::string>("src_ip", "",
                                  "IPv4 source to write (IP and TCP/UDP checksums follow); \"\" = keep"),
               param<std::string>("dst_ip", "", "IPv4 destination to write; \"\" = keep"),
               param<int64_t>("src_port", -1, "TCP/UDP source port to write (0-65535); -1 = keep"),
               param<int64_t>("dst_port", -1, "TCP/UDP destination port to write; -1 = keep"));

}  // namespace tp
