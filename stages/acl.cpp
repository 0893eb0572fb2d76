#include "stages/acl.hpp"

#include <rte_acl.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <map>
#include <tuple>

#include "descriptors/wire_format.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {

using namespace wire;


constexpr size_t kMaxRules = 65535;  // rule index fits 16 bits of the rte_acl priority
constexpr uint64_t kMaxPrio = 4095;  // prio << 16 | order stays below RTE_ACL_MAX_PRIORITY
static_assert((kMaxPrio << 16 | 0xffff) <= RTE_ACL_MAX_PRIORITY);

// One rte_acl category per group of rules; rte_acl wants a multiple of 4 categories.
constexpr uint32_t kVerdictCategory = 0;
constexpr uint32_t kMarkCategory = 1;
constexpr uint32_t kCountCategory = 2;
constexpr uint32_t kCategories = RTE_ACL_RESULTS_MULTIPLIER;
static_assert(kCategories >= 3 && kCategories <= RTE_ACL_MAX_CATEGORIES);

// ---- keys ------------------------------------------------------------------------------------
//
// rte_acl reads fields at fixed offsets from the pointer it is given. Packets put the ports at
// a variable offset (IPv4 options, IPv6 extension headers) and may end early, so each packet's
// 5-tuple is copied into a fixed key first; the classifier reads keys only. Values are in
// network byte order, as rte_acl expects its input.

struct alignas(8) V4Key {
    uint8_t proto;
    uint8_t pad[3];
    uint8_t src[4];
    uint8_t dst[4];
    uint8_t ports[4];  // source, destination
};
static_assert(sizeof(V4Key) == 16);

struct alignas(8) V6Key {
    uint8_t proto;
    uint8_t pad[3];
    uint8_t src[16];
    uint8_t dst[16];
    uint8_t ports[4];
};
static_assert(sizeof(V6Key) == 40);

constexpr uint32_t kV4Fields = 5;   // proto, src, dst, sport, dport
constexpr uint32_t kV6Fields = 11;  // proto, src (4 words), dst (4 words), sport, dport
RTE_ACL_RULE_DEF(V4AclRule, kV4Fields);
RTE_ACL_RULE_DEF(V6AclRule, kV6Fields);

// The first field must be one byte; the others are read four bytes per input index, the two
// ports sharing one.
void define_fields(rte_acl_config& cfg, bool ipv6) {
    const uint32_t words = ipv6 ? 4 : 1;  // 32-bit words per address
    const uint32_t src_at = offsetof(V4Key, src);
    const uint32_t dst_at = ipv6 ? offsetof(V6Key, dst) : offsetof(V4Key, dst);
    const uint32_t ports_at = ipv6 ? offsetof(V6Key, ports) : offsetof(V4Key, ports);
    uint8_t field = 0;
    cfg.defs[field] = {RTE_ACL_FIELD_TYPE_BITMASK, 1, field, 0, 0};
    ++field;
    for (uint32_t w = 0; w < words; ++w, ++field)
        cfg.defs[field] = {RTE_ACL_FIELD_TYPE_MASK, 4, field, field, src_at + 4 * w};
    for (uint32_t w = 0; w < words; ++w, ++field)
        cfg.defs[field] = {RTE_ACL_FIELD_TYPE_MASK, 4, field, field, dst_at + 4 * w};
    const uint8_t ports_input = field;
    cfg.defs[field] = {RTE_ACL_FIELD_TYPE_RANGE, 2, field, ports_input, ports_at};
    ++field;
    cfg.defs[field] = {RTE_ACL_FIELD_TYPE_RANGE, 2, field, ports_input, ports_at + 2};
    ++field;
    cfg.num_fields = field;
    cfg.num_categories = kCategories;
}

// Rule fields for one address: host-order 32-bit words, each with its share of the prefix.
void set_address(rte_acl_field* f, const IpPrefix& p, bool ipv6) {
    if (!ipv6) {
        f[0].value.u32 = p.v4;
        f[0].mask_range.u32 = p.length;
        return;
    }
    for (int w = 0; w < 4; ++w) {
        const uint8_t* b = p.v6.data() + 4 * w;
        f[w].value.u32 = uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3];
        f[w].mask_range.u32 = static_cast<uint32_t>(std::clamp(int(p.length) - 32 * w, 0, 32));
    }
}

template <typename R>
R to_acl_rule(const AclRule& r, size_t index, bool ipv6) {
    R out{};
    switch (r.action) {
        case AclAction::Permit:
        case AclAction::Deny: out.data.category_mask = 1u << kVerdictCategory; break;
        case AclAction::Mark: out.data.category_mask = 1u << kMarkCategory; break;
        case AclAction::Count: out.data.category_mask = 1u << kCountCategory; break;
    }
    // Higher prio first; among equals the earlier line (rte_acl leaves ties unspecified).
    out.data.priority = static_cast<int32_t>(r.prio << 16 | (0xffff - index));
    out.data.userdata = static_cast<uint32_t>(index + 1);  // 0 = no match
    rte_acl_field* f = out.field;
    f[0].value.u8 = r.proto;
    f[0].mask_range.u8 = r.any_proto ? 0 : 0xff;
    const int words = ipv6 ? 4 : 1;
    set_address(f + 1, r.src, ipv6);
    set_address(f + 1 + words, r.dst, ipv6);
    rte_acl_field* ports = f + 1 + 2 * words;
    ports[0].value.u16 = r.sport_low;
    ports[0].mask_range.u16 = r.sport_high;
    ports[1].value.u16 = r.dport_low;
    ports[1].mask_range.u16 = r.dport_high;
    return out;
}

bool has_ports(uint8_t proto) { return proto == kProtoTcp || proto == kProtoUdp || proto == kProtoSctp; }

// ---- rules file ------------------------------------------------------------------------------

const std::map<std::string, uint8_t>& protocol_names() {
    static const std::map<std::string, uint8_t> names{
        {"icmp", 1}, {"tcp", 6}, {"udp", 17}, {"gre", 47}, {"esp", 50},
        {"ah", 51},  {"icmp6", 58}, {"ipv6-icmp", 58}, {"sctp", 132}};
    return names;
}

const char* kFieldList = "proto, src, dst, sport, dport, family or prio";
const char* kActionList = "permit, deny, count or mark N";

bool is_field(const std::string& w) {
    return w == "proto" || w == "src" || w == "dst" || w == "sport" || w == "dport" ||
           w == "family" || w == "prio";
}

AclRule parse_rule(const RuleFile& file, const RuleLine& line) {
    const auto& w = line.words;
    auto fail = [&](const std::string& m) { file.fail(line, m); };
    AclRule r;
    r.line = line.number;
    size_t i = 1;
    if (w[0] == "permit") r.action = AclAction::Permit;
    else if (w[0] == "deny") r.action = AclAction::Deny;
    else if (w[0] == "count") r.action = AclAction::Count;
    else if (w[0] == "mark") {
        r.action = AclAction::Mark;
        uint64_t v = 0;
        if (w.size() < 2 || !parse_decimal(w[1], UINT32_MAX, v))
            fail(std::string("'mark' needs a value 0-4294967295") +
                 (w.size() < 2 ? "" : ", got '" + w[1] + "'"));
        r.mark = static_cast<uint32_t>(v);
        i = 2;
    } else if (is_field(w[0])) {
        fail("missing action: a rule starts with " + std::string(kActionList) + ", not '" + w[0] + "'");
    } else {
        fail("unknown action '" + w[0] + "' (expected " + kActionList + ")");
    }

    enum class Family { Any, V4, V6 } family = Family::Any;
    bool family_given = false;
    std::map<std::string, bool> seen;
    bool ports_given = false;
    bool src_given = false;
    bool dst_given = false;
    std::string why;
    for (; i < w.size(); i += 2) {
        const std::string& key = w[i];
        if (!is_field(key)) {
            if (key == "permit" || key == "deny" || key == "count" || key == "mark")
                fail("a rule has one action; '" + key + "' comes after '" + w[0] + "'");
            fail("unknown field '" + key + "' (expected " + kFieldList + ")");
        }
        if (seen[key]) fail("'" + key + "' given twice");
        seen[key] = true;
        if (i + 1 == w.size()) fail("'" + key + "' needs a value");
        const std::string& value = w[i + 1];
        if (key == "proto") {
            if (value == "any") continue;
            uint64_t n = 0;
            const auto named = protocol_names().find(value);
            if (named != protocol_names().end()) n = named->second;
            else if (!parse_decimal(value, 255, n))
                fail("unknown protocol '" + value +
                     "' (expected any, tcp, udp, sctp, icmp, icmp6, gre, esp, ah or 0-255)");
            r.proto = static_cast<uint8_t>(n);
            r.any_proto = false;
        } else if (key == "src" || key == "dst") {
            if (value == "any") continue;
            IpPrefix& p = key == "src" ? r.src : r.dst;
            if (!parse_ip_prefix(value, p, why)) fail("bad " + key + " prefix: " + why);
            (key == "src" ? src_given : dst_given) = true;
        } else if (key == "sport" || key == "dport") {
            if (value == "any") continue;
            uint16_t& low = key == "sport" ? r.sport_low : r.dport_low;
            uint16_t& high = key == "sport" ? r.sport_high : r.dport_high;
            if (!parse_port_range(value, low, high, why)) fail(key + ": " + why);
            ports_given = true;
        } else if (key == "family") {
            if (value == "ipv4") family = Family::V4;
            else if (value == "ipv6") family = Family::V6;
            else if (value != "any") fail("unknown family '" + value + "' (expected any, ipv4 or ipv6)");
            family_given = family != Family::Any;
        } else {  // prio
            uint64_t prio = 0;
            if (!parse_decimal(value, kMaxPrio, prio))
                fail("bad prio '" + value + "': expected 0-" + std::to_string(kMaxPrio));
            r.prio = static_cast<uint32_t>(prio);
        }
    }

    // Families: the addresses given, and `family`, must agree.
    auto family_of = [](const IpPrefix& p) { return p.ipv6 ? Family::V6 : Family::V4; };
    auto name_of = [](Family f) { return f == Family::V6 ? "IPv6" : "IPv4"; };
    if (src_given && dst_given && family_of(r.src) != family_of(r.dst))
        fail(std::string("src is ") + name_of(family_of(r.src)) + " but dst is " +
             name_of(family_of(r.dst)));
    for (const auto& [given, p, key] :
         {std::tuple{src_given, r.src, "src"}, std::tuple{dst_given, r.dst, "dst"}}) {
        if (!given) continue;
        if (family_given && family_of(p) != family)
            fail(std::string("family ") + (family == Family::V6 ? "ipv6" : "ipv4") + " but " + key +
                 " " + p.str() + " is " + name_of(family_of(p)));
        family = family_of(p);
    }
    r.ipv4 = family != Family::V6;
    r.ipv6 = family != Family::V4;
    if (ports_given && !r.any_proto && !has_ports(r.proto))
        fail("sport/dport need proto tcp, udp, sctp or any (protocol " + std::to_string(r.proto) +
             " has no ports)");
    return r;
}

std::atomic<uint32_t> acl_serial{0};

const char* default_action_name(bool deny) { return deny ? "deny" : "permit"; }

}  // namespace

std::vector<AclRule> parse_acl_rules(const RuleFile& file) {
    std::vector<AclRule> rules;
    for (const RuleLine& line : file.lines()) {
        if (rules.size() == kMaxRules)
            file.fail(line, "too many rules (at most " + std::to_string(kMaxRules) + ")");
        rules.push_back(parse_rule(file, line));
    }
    return rules;
}

bool packet_mark(const rte_mbuf* m, uint32_t& mark) {
    if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) == 0) return false;
    mark = m->hash.fdir.hi;
    return true;
}

// ---- the stage -------------------------------------------------------------------------------

void Acl::check_params(const ParamValues& params) {
    parse_acl_rules(RuleFile(params.get_string("rules"), params.where("rules")));
}

Acl::Acl(const ParamValues& params)
    : Stage(kKind), params_(params), default_deny_(params.get_string("default") == "deny") {
    denied_ = declare_drop("denied");
    default_denied_ = declare_drop("default_deny");
    counted_ = declare_event("counted");
    marked_ = declare_event("marked");
    not_ip_ = declare_event("not_ip");
}

Acl::~Acl() { destroy(); }

uint64_t Acl::memory_hint(const ParamValues& params) {
    size_t lines = 0;
    try {
        lines = RuleFile(params.get_string("rules"), params.where("rules")).lines().size();
    } catch (const std::exception&) {
        return 0;
    }
    constexpr uint64_t kBase = 1ull << 20;
    constexpr uint64_t kPerRule = 2048;
    return kBase + lines * kPerRule;
}

void Acl::destroy() {
    if (v4_ != nullptr) rte_acl_free(v4_);
    if (v6_ != nullptr) rte_acl_free(v6_);
    v4_ = v6_ = nullptr;
}

void Acl::build(const std::string& name, bool ipv6, int socket) {
    auto fail = [&](const std::string& what, int err) {
        params_.fail("rules", "cannot build the " + std::string(ipv6 ? "IPv6" : "IPv4") +
                                  " classifier for '" + params_.get_string("rules") + "': " + what +
                                  " (" + rte_strerror(err) + ")");
    };
    const uint32_t fields = ipv6 ? kV6Fields : kV4Fields;
    std::vector<std::byte> table;
    const size_t rule_size = RTE_ACL_RULE_SZ(fields);
    uint32_t count = 0;
    for (size_t i = 0; i < rules_.size(); ++i) {
        const AclRule& r = rules_[i];
        if (!(ipv6 ? r.ipv6 : r.ipv4)) continue;
        table.resize(table.size() + rule_size);
        std::byte* at = table.data() + size_t(count++) * rule_size;
        if (ipv6) {
            const V6AclRule x = to_acl_rule<V6AclRule>(r, i, true);
            std::memcpy(at, &x, sizeof x);
        } else {
            const V4AclRule x = to_acl_rule<V4AclRule>(r, i, false);
            std::memcpy(at, &x, sizeof x);
        }
    }
    if (count == 0) return;  // no rule for this family: every packet misses

    const rte_acl_param prm{name.c_str(), socket, static_cast<uint32_t>(rule_size), count};
    rte_acl_ctx* ctx = rte_acl_create(&prm);
    if (ctx == nullptr) fail("rte_acl_create failed", rte_errno);
    (ipv6 ? v6_ : v4_) = ctx;
    int rc = rte_acl_add_rules(ctx, reinterpret_cast<const rte_acl_rule*>(table.data()), count);
    if (rc != 0) fail("rte_acl_add_rules failed", -rc);
    rte_acl_config cfg{};
    define_fields(cfg, ipv6);
    rc = rte_acl_build(ctx, &cfg);
    if (rc != 0) fail("rte_acl_build failed", -rc);
}

void Acl::open(StageEnv& env) {
    destroy();
    const RuleFile file(params_.get_string("rules"), params_.where("rules"));
    rules_ = parse_acl_rules(file);
    hits_.assign(rules_.size(), 0);
    const uint32_t serial = acl_serial++;
    build("tp_acl4_" + std::to_string(serial), false, env.socket);
    build("tp_acl6_" + std::to_string(serial), true, env.socket);
    spdlog::debug("{}: {} rules from {}, default {}", env.node_name, rules_.size(), file.path(),
                  default_action_name(default_deny_));
}

void Acl::process(Burst& b) {
    const uint16_t n = b.n;
    V4Key k4[kBurstMax];
    V6Key k6[kBurstMax];
    const uint8_t* in4[kBurstMax];
    const uint8_t* in6[kBurstMax];
    uint16_t at4[kBurstMax];  // burst position of each key
    uint16_t at6[kBurstMax];
    uint16_t n4 = 0, n6 = 0;
    uint32_t winner[kBurstMax][kCategories] = {};  // rule index + 1 per category, 0 = none

    for (uint16_t i = 0; i < n; ++i) {
        if (i + 1 < n) rte_prefetch0(RTE_PTR_ADD(b.d[i + 1].mbuf, RTE_CACHE_LINE_SIZE));
        const PacketDesc& d = b.d[i];
        const rte_mbuf* m = d.mbuf;
        const uint8_t l3 = d.type & ptype::kL3Mask;
        if (!(d.type & ptype::kParsed) || m->l3_len == 0 ||
            (l3 != ptype::kL3Ipv4 && l3 != ptype::kL3Ipv6)) [[unlikely]] {
            count_event(not_ip_);
            continue;
        }
        const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
        uint8_t proto;
        uint8_t* ports;
        if (l3 == ptype::kL3Ipv4) {
            V4Key& k = k4[n4];
            proto = ip[9];
            std::memcpy(k.src, ip + 12, 8);  // source and destination
            ports = k.ports;
            in4[n4] = reinterpret_cast<const uint8_t*>(&k);
            at4[n4++] = i;
            k.proto = proto;
        } else {
            V6Key& k = k6[n6];
            // The protocol is the last next-header of the chain parse measured into l3_len.
            proto = ip[6];
            for (uint32_t off = 40; off < m->l3_len;) {
                const uint32_t len = proto == kProtoFragment ? 8
                                     : proto == kProtoAh     ? (ip[off + 1] + 2u) * 4
                                                             : (ip[off + 1] + 1u) * 8;
                proto = ip[off];
                off += len;
            }
            std::memcpy(k.src, ip + 8, 32);
            ports = k.ports;
            in6[n6] = reinterpret_cast<const uint8_t*>(&k);
            at6[n6++] = i;
            k.proto = proto;
        }
        if (m->l4_len != 0 && has_ports(proto)) std::memcpy(ports, ip + m->l3_len, 4);
        else std::memset(ports, 0, 4);
    }

    uint32_t results[kBurstMax * kCategories];
    if (n4 != 0 && v4_ != nullptr) {
        rte_acl_classify(v4_, in4, results, n4, kCategories);
        for (uint16_t j = 0; j < n4; ++j)
            std::memcpy(winner[at4[j]], results + j * kCategories, sizeof winner[0]);
    }
    if (n6 != 0 && v6_ != nullptr) {
        rte_acl_classify(v6_, in6, results, n6, kCategories);
        for (uint16_t j = 0; j < n6; ++j)
            std::memcpy(winner[at6[j]], results + j * kCategories, sizeof winner[0]);
    }

    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
        const uint32_t* w = winner[i];
        if (const uint32_t c = w[kCountCategory]; c != 0) {
            ++hits_[c - 1];
            count_event(counted_);
        }
        bool deny = default_deny_;
        if (const uint32_t v = w[kVerdictCategory]; v != 0) {
            ++hits_[v - 1];
            deny = rules_[v - 1].action == AclAction::Deny;
        }
        if (deny) {
            drop(b.d[i], w[kVerdictCategory] != 0 ? denied_ : default_denied_);
            continue;
        }
        if (const uint32_t mk = w[kMarkCategory]; mk != 0) {
            ++hits_[mk - 1];
            rte_mbuf* m = b.d[i].mbuf;
            m->hash.fdir.hi = rules_[mk - 1].mark;
            m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
            count_event(marked_);
        }
        b.d[kept++] = b.d[i];
    }
    b.n = kept;
}

void Acl::close() {
    for (size_t i = 0; i < rules_.size(); ++i)
        spdlog::debug("acl rule at line {}: {} hits", rules_[i].line, hits_[i]);
    destroy();
}

TILEPIPE_STAGE(Acl, "acl",
               "5-tuple firewall (IPv4/IPv6) with DPDK rte_acl; permit, deny, count, mark",
               param<std::string>("rules", required,
                                  "rules file: one rule per line, 'ACTION [FIELD VALUE]...', "
                                  "actions permit|deny|count|mark N, fields proto, src, dst, "
                                  "sport, dport, family, prio (see stages/acl.hpp)").input_file(),
               param<std::string>("default", "permit",
                                  "verdict for packets no permit/deny rule matches (denied ones "
                                  "drop as \"default_deny\")",
                                  {"permit", "deny"}));

}  // namespace tp
