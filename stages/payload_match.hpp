// payload_match: searches packet payloads for many patterns at once (Aho–Corasick), counts
// and marks the packets that contain one, and optionally keeps only those.
//
// Synopsis
//   - { stage: payload_match, patterns: conf/data/ids.patterns }
//   - { stage: payload_match, patterns: sigs.txt, nocase: true, mode: keep_matching }
//
// Parameters
//   patterns  patterns file (syntax below)                                    required
//   nocase    ASCII letters match either case, in every pattern               default false
//   mode      mark: pass every packet, marking matches;
//             keep_matching: drop packets without a match ("no_match")        default mark
//   alerts    JSON-lines file, one line per matching packet ("" = none)       default ""
//
// Patterns file: one pattern per line, Snort `content` style.
//   - Leading and trailing blanks (spaces, tabs, CR) are trimmed; blank lines and lines whose
//     first non-blank character is `#` are comments. A `#` later in a line is pattern text.
//   - Text is taken byte for byte. `|...|` holds bytes in hex: pairs of hex digits, blanks
//     between pairs allowed: `GET |2f|admin`, `|de ad be ef|`, `|0d0a 0d0a|`.
//   - `\|`, `\\` and `\"` stand for `|`, `\` and `"`; any other backslash is an error.
//   - A line wrapped in double quotes keeps its blanks or a leading `#`: `" 220 "`, `"#!"`.
//   - A pattern is 1 to 4096 bytes.
// An error stops open() with `file:line: message` (e.g. `ids.patterns:7: odd number of hex
// digits in |...|`); a file with no patterns is an error too.
//
// What is searched: when `parse` found a transport header (TCP, UDP, SCTP, ICMP; mbuf l4_len
// set) the transport payload, from the end of that header to the end of the IP datagram
// (Ethernet padding excluded); otherwise (non-IP, non-first fragments, unparsed packets, other
// IP protocols) the whole frame. A payload spread over several mbuf segments is searched as
// one: the automaton's state carries over from segment to segment, so nothing is linearised
// or missed. Patterns are not matched across packets (no stream reassembly).
//
// Marks: a matching packet gets the mbuf dynamic flag "tilepipe_payload_matched" in ol_flags
// (payload_matched()) and, in the dynamic field "tilepipe_payload_pattern" (uint32), the
// 1-based number of the first pattern found scanning the payload left to right (the longest
// when several end at the same byte) (payload_pattern()); patterns are numbered in file order.
// Alerts: with `alerts: FILE`, one JSON line per matching packet (alert_log.hpp: packet number,
// 1-based as Wireshark counts,
// pattern number and text, length, addresses and ports), written once per burst; workers of a
// farm naming the same file share it (SharedOutputFile). A write error is logged at close.
// Counters: event "matched" counts matching packets; pattern_packets(i) counts the packets
// in which pattern i occurs (once per packet however often it occurs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/location.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct rte_mbuf;

namespace tp {

class AhoCorasick;
class SharedOutputFile;

struct MatchPattern {
    std::string bytes;  // what is searched for
    std::string text;   // as written in the file (trimmed)
    int line = 0;       // 1-based line in the file
};

// Parses one pattern as written (already trimmed, not a comment); returns the bytes, or
// throws std::invalid_argument with the message a file error carries.
std::string parse_pattern(const std::string& text);

// Reads a patterns file; errors are LocatedError at `path:line`, or at `named_at` when the
// file cannot be read.
std::vector<MatchPattern> load_patterns(const std::string& path, const Location& named_at);

// Whether payload_match marked `m`, and with which pattern (1-based; 0 when not marked).
bool payload_matched(const rte_mbuf* m);
uint32_t payload_pattern(const rte_mbuf* m);

class PayloadMatch final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 4.5;  // walks the automaton over every payload byte
    static double expected_pass(const ParamValues& p);  // alerts are rare under keep_matching

    explicit PayloadMatch(const ParamValues& p);
    // Reads the patterns and builds the automaton once (too many or too long patterns are
    // refused there), before EAL starts.
    static void check_params(const ParamValues& p);
    ~PayloadMatch() override;
    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    // After open(): the patterns in file order, and per pattern the packets it occurred in.
    const std::vector<MatchPattern>& patterns() const { return patterns_; }
    uint64_t pattern_packets(size_t i) const { return pattern_packets_[i]; }

private:
    static std::unique_ptr<AhoCorasick> build_automaton(const ParamValues& p,
                                                        const std::vector<MatchPattern>& patterns);
    // Scans the packet's payload; returns the 1-based id of the first pattern found, 0 if none.
    uint32_t scan(const rte_mbuf* m);

    ParamValues params_;
    bool nocase_;
    bool keep_matching_;
    std::vector<MatchPattern> patterns_;
    std::unique_ptr<AhoCorasick> automaton_;
    std::shared_ptr<SharedOutputFile> alerts_;  // null without `alerts`
    std::string alert_lines_;                   // one burst's alerts, written together
    std::vector<uint64_t> pattern_packets_;
    std::vector<uint64_t> last_seen_in_;  // per pattern: serial of the last packet it was counted for
    uint64_t packet_serial_ = 0;
    uint64_t matched_flag_ = 0;  // ol_flags bit
    int pattern_field_ = -1;     // dynamic field offset
    uint16_t no_match_;
    uint16_t matched_event_;
};

}  // namespace tp
