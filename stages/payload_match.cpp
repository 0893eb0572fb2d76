#include "stages/payload_match.hpp"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mbuf_ptype.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "descriptors/wire_format.hpp"
#include "framework/matching/aho_corasick.hpp"
#include "framework/output/alert_log.hpp"
#include "framework/output/output_path.hpp"
#include "framework/output/shared_output_file.hpp"
#include "framework/rules/rule_file.hpp"
#include "framework/rules/text_lines.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {

using namespace wire;

constexpr size_t kMaxPatternBytes = 4096;
constexpr const char* kMatchedFlag = "tilepipe_payload_matched";
constexpr const char* kPatternField = "tilepipe_payload_pattern";

struct Marks {
    uint64_t flag;
    int field;
};

// Registered once per process (DPDK makes a second registration with the same name and
// shape return the same one).
const Marks& marks() {
    static const Marks m = [] {
        rte_mbuf_dynflag flag{};
        snprintf(flag.name, sizeof flag.name, "%s", kMatchedFlag);
        const int bit = rte_mbuf_dynflag_register(&flag);
        rte_mbuf_dynfield field{};
        snprintf(field.name, sizeof field.name, "%s", kPatternField);
        field.size = sizeof(uint32_t);
        field.align = alignof(uint32_t);
        const int offset = rte_mbuf_dynfield_register(&field);
        if (bit < 0 || offset < 0)
            throw std::runtime_error(std::string("cannot register the payload_match mbuf marks: ") +
                                     rte_strerror(rte_errno));
        return Marks{1ull << bit, offset};
    }();
    return m;
}


int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The bytes of the `|...|` starting after the opening bar at `i`; leaves `i` on the closing bar.
std::string hex_bytes(const std::string& t, size_t& i) {
    std::string out;
    int high = -1;  // first digit of a pair in progress
    for (; i < t.size() && t[i] != '|'; ++i) {
        const char c = t[i];
        if (is_blank(c)) {
            if (high >= 0) throw std::invalid_argument("blank inside a hex byte in |...|");
            continue;
        }
        const int v = hex_value(c);
        if (v < 0) throw std::invalid_argument(std::string("'") + c + "' is not a hex digit in |...|");
        if (high < 0) {
            high = v;
        } else {
            out.push_back(static_cast<char>(high << 4 | v));
            high = -1;
        }
    }
    if (i == t.size()) throw std::invalid_argument("unterminated |...| (no closing '|')");
    if (high >= 0) throw std::invalid_argument("odd number of hex digits in |...|");
    if (out.empty()) throw std::invalid_argument("empty |...|");
    return out;
}

// The payload bytes to search: [start, end) of the frame.
struct Region {
    uint32_t start;
    uint32_t end;
};

Region payload_region(const rte_mbuf* m) {
    const uint32_t frame = rte_pktmbuf_pkt_len(m);
    const uint32_t ptype = m->packet_type;
    const bool ipv4 = RTE_ETH_IS_IPV4_HDR(ptype);
    const bool ipv6 = RTE_ETH_IS_IPV6_HDR(ptype);
    if (m->l4_len == 0 || !(ipv4 || ipv6)) return {0, frame};
    // `parse` vouches that the whole IP header sits in the first segment.
    const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    uint32_t ip_end;
    if (ipv4) {
        ip_end = m->l2_len + uint32_t(be16(ip + 2));
    } else {
        const uint32_t payload = be16(ip + 4);
        ip_end = payload == 0 ? frame : m->l2_len + 40u + payload;  // 0: a jumbogram
    }
    const uint32_t end = std::min(ip_end, frame);
    const uint32_t start = std::min<uint32_t>(m->l2_len + m->l3_len + m->l4_len, end);
    return {start, end};
}

}  // namespace

std::string parse_pattern(const std::string& written) {
    std::string t = written;
    if (!t.empty() && t.front() == '"') {
        // The closing quote must be there and not escaped (an odd run of backslashes).
        size_t backslashes = 0;
        while (t.size() >= 2 + backslashes && t[t.size() - 2 - backslashes] == '\\') ++backslashes;
        if (t.size() < 2 || t.back() != '"' || backslashes % 2 == 1)
            throw std::invalid_argument("unterminated quote (a quoted pattern ends with '\"')");
        t = t.substr(1, t.size() - 2);
    }
    std::string out;
    for (size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '\\') {
            if (i + 1 == t.size()) throw std::invalid_argument("a backslash ends the pattern");
            const char e = t[++i];
            if (e != '|' && e != '\\' && e != '"')
                throw std::invalid_argument(std::string("unknown escape '\\") + e +
                                            "' (escapes: \\| \\\\ \\\"; write other bytes as |hex|)");
            out.push_back(e);
        } else if (c == '|') {
            ++i;
            out += hex_bytes(t, i);
        } else {
            out.push_back(c);
        }
    }
    if (out.empty()) throw std::invalid_argument("empty pattern");
    if (out.size() > kMaxPatternBytes)
        throw std::invalid_argument("pattern of " + std::to_string(out.size()) + " bytes (at most " +
                                    std::to_string(kMaxPatternBytes) + ")");
    return out;
}

std::vector<MatchPattern> load_patterns(const std::string& path, const Location& named_at) {
    std::vector<MatchPattern> patterns;
    int number = 0;
    for (const std::string& line : read_text_lines(path, named_at, "patterns")) {
        ++number;
        const std::string text = trim_blanks(line);
        if (text.empty() || text.front() == '#') continue;
        try {
            patterns.push_back(MatchPattern{parse_pattern(text), text, number});
        } catch (const std::invalid_argument& e) {
            throw LocatedError(Location{path, number}, e.what());
        }
    }
    if (patterns.empty()) throw LocatedError(Location{path}, "no patterns (only blank lines and comments)");
    return patterns;
}

bool payload_matched(const rte_mbuf* m) { return (m->ol_flags & marks().flag) != 0; }

uint32_t payload_pattern(const rte_mbuf* m) {
    return payload_matched(m) ? *RTE_MBUF_DYNFIELD(m, marks().field, const uint32_t*) : 0;
}

std::unique_ptr<AhoCorasick> PayloadMatch::build_automaton(const ParamValues& p,
                                                           const std::vector<MatchPattern>& patterns) {
    std::vector<std::string> bytes;
    bytes.reserve(patterns.size());
    for (const MatchPattern& mp : patterns) bytes.push_back(mp.bytes);
    try {
        return std::make_unique<AhoCorasick>(bytes, p.get_bool("nocase"));
    } catch (const std::invalid_argument& e) {
        p.fail("patterns", e.what());
    }
}

void PayloadMatch::check_params(const ParamValues& p) {
    build_automaton(p, load_patterns(p.get_string("patterns"), p.where("patterns")));
    check_output_path(p, "alerts");
}

PayloadMatch::PayloadMatch(const ParamValues& p)
    : Stage(kKind),
      params_(p),
      nocase_(p.get_bool("nocase")),
      keep_matching_(p.get_string("mode") == "keep_matching") {
    no_match_ = declare_drop("no_match");
    matched_event_ = declare_event("matched");
    matched_flag_ = marks().flag;
    pattern_field_ = marks().field;
}

PayloadMatch::~PayloadMatch() = default;

void PayloadMatch::open(StageEnv& env) {
    patterns_ = load_patterns(params_.get_string("patterns"), params_.where("patterns"));
    automaton_ = build_automaton(params_, patterns_);
    pattern_packets_.assign(patterns_.size(), 0);
    last_seen_in_.assign(patterns_.size(), UINT64_MAX);
    packet_serial_ = 0;
    const std::string& alerts = params_.get_string("alerts");
    if (!alerts.empty()) {
        try {
            alerts_ = SharedOutputFile::open(alerts, env.outputs, "json");
        } catch (const std::runtime_error& e) {
            params_.fail("alerts", e.what());
        }
    }
}

void PayloadMatch::close() { alerts_.reset(); }

uint32_t PayloadMatch::scan(const rte_mbuf* m) {
    const Region r = payload_region(m);
    const uint64_t serial = packet_serial_++;
    uint32_t first = 0;
    const auto on_match = [&](uint32_t id, size_t) {
        if (first == 0) first = id + 1;
        if (last_seen_in_[id] != serial) {
            last_seen_in_[id] = serial;
            ++pattern_packets_[id];
        }
    };
    AhoCorasick::State s = AhoCorasick::start();
    uint32_t seg_start = 0;
    for (const rte_mbuf* seg = m; seg != nullptr && seg_start < r.end; seg = seg->next) {
        const uint32_t seg_end = seg_start + seg->data_len;
        const uint32_t lo = std::max(r.start, seg_start);
        const uint32_t hi = std::min(r.end, seg_end);
        if (lo < hi)
            s = automaton_->scan(s, rte_pktmbuf_mtod_offset(seg, const uint8_t*, lo - seg_start), hi - lo, lo,
                                 on_match);
        seg_start = seg_end;
    }
    return first;
}

void PayloadMatch::process(Burst& b) {
    uint16_t kept = 0;
    uint64_t matched = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        const PacketDesc d = b.d[i];
        const uint32_t first = scan(d.mbuf);
        if (first != 0) {
            ++matched;
            d.mbuf->ol_flags |= matched_flag_;
            *RTE_MBUF_DYNFIELD(d.mbuf, pattern_field_, uint32_t*) = first;
            if (alerts_) append_alert_line(alert_lines_, d.mbuf, packet_serial_, first, patterns_[first - 1].text);  // 1-based
        } else if (keep_matching_) {
            drop(d, no_match_);
            continue;
        }
        b.d[kept++] = d;
    }
    b.n = kept;
    if (matched != 0) count_event(matched_event_, matched);
    if (!alert_lines_.empty()) {
        alerts_->write(alert_lines_);
        alert_lines_.clear();
    }
}

double PayloadMatch::expected_pass(const ParamValues& p) {
    return p.get_string("mode") == "keep_matching" ? 0.05 : 1.0;
}

TILEPIPE_STAGE(PayloadMatch, "payload_match",
               "processor: search payloads for many patterns at once (Aho-Corasick); count and "
               "mark matches, optionally keep only matching packets",
               param<std::string>("patterns", required,
                                  "patterns file: one per line, `#` comments, text with |hex| "
                                  "bytes as in Snort (`GET |2f|admin`, `|de ad be ef|`), "
                                  "\\| \\\\ \\\" escapes, \"...\" keeps blanks").input_file(),
               param<bool>("nocase", false, "ASCII letters match either case"),
               param<std::string>("mode", "mark",
                                  "mark: pass every packet, matching ones flagged "
                                  "(\"tilepipe_payload_matched\" in ol_flags, pattern number in "
                                  "field \"tilepipe_payload_pattern\"); keep_matching: drop "
                                  "packets without a match (reason \"no_match\")",
                                  {"mark", "keep_matching"}),
               param<std::string>("alerts", "",
                                  "JSON-lines file with one line per matching packet (packet: its number among "
                                  "those this stage saw, from 1 as Wireshark counts; pattern, text, length, "
                                  "addresses, ports); \"\" = none"));

}  // namespace tp
