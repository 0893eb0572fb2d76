#include "stages/classify.hpp"

#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <cctype>
#include <memory>
#include <set>
#include <sstream>

#include "descriptors/wire_format.hpp"
#include "descriptors/wire_length.hpp"
#include "framework/rules/rule_file.hpp"
#include "framework/stage/registry.hpp"
#include "stages/tcpdump_expr.hpp"

namespace tp {

namespace {

using namespace wire;

constexpr uint16_t kVlanTags[] = {kTpidVlan, kTpidQinq, kTpidQinqOld};

bool valid_name(const std::string& n) {
    if (n.empty()) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}

// A number in decimal or 0x hex within [0, hi]; -1 when it is none.
int32_t number(const std::string& v, int32_t hi) {
    if (v.empty()) return -1;
    char* end = nullptr;
    const long x = std::strtol(v.c_str(), &end, 0);
    return *end == '\0' && x >= 0 && x <= hi ? static_cast<int32_t>(x) : -1;
}

// Sets one FIELD=VALUE of a field match; false when `word` is not one (so the spec is an
// expression); throws when it is one with a bad value.
bool field(ClassifyMatch& m, const std::string& word, const std::string& where) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) return false;
    const std::string k = word.substr(0, eq), v = word.substr(eq + 1);
    const auto bad = [&](const std::string& want) {
        return std::invalid_argument(where + ": " + k + "=" + v + ": expected " + want);
    };
    if (k == "ethertype") {
        m.ethertype = v == "ipv4" ? 0x0800 : v == "ipv6" ? 0x86dd : v == "arp" ? 0x0806 : number(v, 0xffff);
        if (m.ethertype < 0) throw bad("a number up to 0xffff, or ipv4, ipv6, arp");
    } else if (k == "vlan") {
        if ((m.vlan = number(v, 4095)) < 0) throw bad("a VLAN id 0-4095");
    } else if (k == "proto") {
        m.proto = v == "tcp" ? 6 : v == "udp" ? 17 : v == "icmp" ? 1 : number(v, 255);
        if (m.proto < 0) throw bad("tcp, udp, icmp or a number 0-255");
        m.icmp = v == "icmp";
    } else if (k == "port" || k == "src_port" || k == "dst_port") {
        int32_t& p = k == "port" ? m.port : k == "src_port" ? m.src_port : m.dst_port;
        if ((p = number(v, 65535)) < 0) throw bad("a port 0-65535");
    } else {
        return false;
    }
    return true;
}


}  // namespace

std::vector<ClassifyMatch> parse_matches(const std::string& text, const Location& where) {
    std::vector<ClassifyMatch> out;
    std::set<std::string> names;
    std::string line;
    std::string all = text;
    for (char& c : all)
        if (c == ';') c = '\n';
    std::istringstream in(all);
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        line = trim_blanks(line);
        if (line.empty()) continue;
        const std::string place = "match " + std::to_string(out.size() + 1) + " ('" + line + "')";
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            throw LocatedError(where, place + ": expected 'NAME: SPEC' (a tcpdump expression or FIELD=VALUE words)");
        ClassifyMatch m;
        m.name = trim_blanks(line.substr(0, colon));
        const std::string spec = trim_blanks(line.substr(colon + 1));
        if (!valid_name(m.name)) throw LocatedError(where, place + ": a name uses only letters, digits, '_' and '-'");
        if (m.name == "default") throw LocatedError(where, place + ": 'default' is the output of packets no match takes");
        if (!names.insert(m.name).second) throw LocatedError(where, place + ": '" + m.name + "' is named twice");
        if (spec.empty()) throw LocatedError(where, place + ": no SPEC after the name");
        std::istringstream words(spec);
        std::string w;
        m.fields = true;
        try {
            while (words >> w) m.fields = m.fields && field(m, w, place);
        } catch (const std::invalid_argument& e) {
            throw LocatedError(where, e.what());
        }
        if (!m.fields) {
            m = ClassifyMatch{m.name};
            m.expr = spec;
            try {
                compile_tcpdump_expr(spec);
            } catch (const std::exception& e) {
                throw LocatedError(where, place + ": " + e.what());
            }
        }
        out.push_back(std::move(m));
    }
    if (out.empty()) throw LocatedError(where, "classify needs at least one match ('NAME: SPEC' per line)");
    if (out.size() > 250) throw LocatedError(where, "classify takes at most 250 matches");
    return out;
}

void Classify::check_params(const ParamValues& params) { parse_matches(params.get_string("matches"), params.where("matches")); }

std::vector<OutputSpec> Classify::outputs(const ParamValues& params) {
    std::vector<OutputSpec> outs;
    for (const ClassifyMatch& m : parse_matches(params.get_string("matches"), params.where("matches")))
        outs.push_back(OutputSpec{m.name, m.fields ? "packets its fields match" : "packets `" + m.expr + "` accepts"});
    outs.push_back(OutputSpec{"default", "packets no match takes"});
    return outs;
}

Classify::Classify(const ParamValues& params)
    : Stage(kKind), matches_(parse_matches(params.get_string("matches"), params.where("matches"))) {
    for (const ClassifyMatch& m : matches_) programs_.push_back(m.fields ? nullptr : compile_tcpdump_expr(m.expr).release());
}

Classify::~Classify() {
    for (bpf_program* p : programs_) BpfProgramFree{}(p);
}

void Classify::open(StageEnv&) { wire_offset_ = wire_length_offset(); }

bool Classify::fields_hold(const ClassifyMatch& m, const PacketDesc& d) const {
    const rte_mbuf* mb = d.mbuf;
    const uint8_t* f = rte_pktmbuf_mtod(mb, const uint8_t*);
    const uint32_t len = rte_pktmbuf_data_len(mb);
    if (m.ethertype >= 0 || m.vlan >= 0) {
        if (len < 14) return false;
        uint32_t at = 12;
        uint16_t type = be16(f + at);
        const bool tagged = type == kVlanTags[0] || type == kVlanTags[1] || type == kVlanTags[2];
        if (m.vlan >= 0 && (!tagged || len < 16 || (be16(f + 14) & 0x0fff) != m.vlan)) return false;
        while ((type == kVlanTags[0] || type == kVlanTags[1] || type == kVlanTags[2]) && at + 6 <= len) {
            at += 4;
            type = be16(f + at);
        }
        if (m.ethertype >= 0 && type != m.ethertype) return false;
    }
    if (m.proto < 0 && m.port < 0 && m.src_port < 0 && m.dst_port < 0) return true;
    // IP fields: what parse found.
    const uint8_t l3 = d.type & ptype::kL3Mask;
    if (!(d.type & ptype::kParsed) || (l3 != ptype::kL3Ipv4 && l3 != ptype::kL3Ipv6) || mb->l3_len == 0) return false;
    if (m.proto >= 0) {
        const uint32_t at = mb->l2_len + (l3 == ptype::kL3Ipv4 ? 9u : 6u);
        const int want = m.icmp && l3 == ptype::kL3Ipv6 ? 58 : m.proto;
        if (at >= len || f[at] != want) return false;
    }
    if (m.port < 0 && m.src_port < 0 && m.dst_port < 0) return true;
    const uint8_t l4 = d.type & ptype::kL4Mask;
    if (l4 != ptype::kL4Tcp && l4 != ptype::kL4Udp) return false;
    const uint32_t at = mb->l2_len + mb->l3_len;
    if (at + 4 > len) return false;
    const uint16_t sp = be16(f + at), dp = be16(f + at + 2);
    if (m.port >= 0 && sp != m.port && dp != m.port) return false;
    if (m.src_port >= 0 && sp != m.src_port) return false;
    if (m.dst_port >= 0 && dp != m.dst_port) return false;
    return true;
}

uint8_t Classify::classify(const PacketDesc& d) const {
    const rte_mbuf* m = d.mbuf;
    for (size_t k = 0; k < matches_.size(); ++k) {
        if (programs_[k] == nullptr) {
            if (fields_hold(matches_[k], d)) return static_cast<uint8_t>(k);
            continue;
        }
        // libpcap's interpreter over the first segment; `len` is the length on the wire.
        const uint32_t wire = wire_length(m, wire_offset_);
        if (bpf_filter(programs_[k]->bf_insns, rte_pktmbuf_mtod(m, const u_char*), wire != 0 ? wire : rte_pktmbuf_pkt_len(m),
                       rte_pktmbuf_data_len(m)) != 0)
            return static_cast<uint8_t>(k);
    }
    return static_cast<uint8_t>(matches_.size());  // default
}

void Classify::process(Burst& b) {
    for (uint16_t i = 0; i < b.n; ++i) {
        if (i + 1 < b.n) rte_prefetch0(rte_pktmbuf_mtod(b.d[i + 1].mbuf, void*));
        set_output(i, classify(b.d[i]));
    }
}

std::string Classify::stage_notes() {
    return "  outputs: one per match, by its NAME, in order, then default (packets no match takes); the first match\n"
           "  that holds wins; wire them with next: {NAME: NODE, ..., default: NODE}\n"
           "  field words (all must hold; read the frame and what parse found): ethertype=ipv4|ipv6|arp|N (after\n"
           "  VLAN tags), vlan=ID (outermost tag), proto=tcp|udp|icmp|N, port=N, src_port=N, dst_port=N (TCP/UDP)\n"
           "  any other SPEC is a tcpdump expression, compiled once by libpcap and run by its bpf_filter: the\n"
           "  verdicts of tcpdump -r FILE EXPR\n";
}

TILEPIPE_STAGE(Classify, "classify",
               "processor: sends each packet to the output of the first match it passes (tcpdump "
               "expressions or ethertype/vlan/proto/port fields), else to `default`",
               param<std::string>("matches", required,
                                  "the matches in order, 'NAME: SPEC' per line or ';'-separated; SPEC is "
                                  "FIELD=VALUE words (ethertype, vlan, proto, port, src_port, dst_port) or "
                                  "a tcpdump filter expression; outputs: each NAME, then default"));

}  // namespace tp
