#include "framework/output/alert_log.hpp"

#include <arpa/inet.h>
#include <rte_mbuf.h>
#include <rte_mbuf_ptype.h>

#include <nlohmann/json.hpp>

namespace tp {

namespace {

uint16_t be16_at(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

std::string address(int family, const uint8_t* bytes) {
    char buf[INET6_ADDRSTRLEN];
    return inet_ntop(family, bytes, buf, sizeof buf) != nullptr ? buf : "";
}

// Adds the addresses and ports `parse` located. It types L3 and L4 only for headers whole in
// the first segment, so the reads below stay inside it.
void add_tuple(nlohmann::json& line, const rte_mbuf* m) {
    const uint32_t pt = m->packet_type;
    const bool v4 = RTE_ETH_IS_IPV4_HDR(pt), v6 = RTE_ETH_IS_IPV6_HDR(pt);
    if (!(v4 || v6) || rte_pktmbuf_data_len(m) < m->l2_len + (v4 ? 20u : 40u)) return;
    const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    line["ip"] = v4 ? 4 : 6;
    line["src"] = address(v4 ? AF_INET : AF_INET6, ip + (v4 ? 12 : 8));
    line["dst"] = address(v4 ? AF_INET : AF_INET6, ip + (v4 ? 16 : 24));
    const uint32_t l4 = pt & RTE_PTYPE_L4_MASK;
    if (l4 == RTE_PTYPE_L4_TCP) line["proto"] = 6;
    else if (l4 == RTE_PTYPE_L4_UDP) line["proto"] = 17;
    else if (v4) line["proto"] = ip[9];
    if ((l4 == RTE_PTYPE_L4_TCP || l4 == RTE_PTYPE_L4_UDP) &&
        rte_pktmbuf_data_len(m) >= uint32_t(m->l2_len) + m->l3_len + 4) {
        const uint8_t* ports = ip + m->l3_len;
        line["sport"] = be16_at(ports);
        line["dport"] = be16_at(ports + 2);
    }
}

}  // namespace

void append_alert_line(std::string& out, const rte_mbuf* m, uint64_t packet, uint32_t pattern,
                       const std::string& text) {
    nlohmann::json line{{"packet", packet}, {"pattern", pattern}, {"text", text}, {"length", rte_pktmbuf_pkt_len(m)}};
    add_tuple(line, m);
    // Pattern text is the user's bytes: replace what is not UTF-8 rather than fail the run.
    out += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out += '\n';
}

}  // namespace tp
