// payload_match: the Aho-Corasick automaton finds exactly what a brute-force search finds; the
// patterns file has a documented syntax whose errors are `file:line: message`; the stage
// searches transport payloads (whole frames without one), across mbuf segments, marks and
// counts matches, and in keep_matching mode drops the rest; on shared captures its per-pattern
// packet counts equal tshark's `tcp.payload contains` / `udp.payload contains`.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "framework/matching/aho_corasick.hpp"
#include "stages/parse.hpp"
#include "stages/payload_match.hpp"
#include "stages/pcap_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;
using Bytes = std::vector<uint8_t>;

ParamValues params_of(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

uint64_t event(const Stage& s, const std::string& name) {
    const auto& names = s.events();
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it == names.end() ? 0 : s.stats().event[it - names.begin()].get();
}

// ---- the automaton -------------------------------------------------------------------------

struct Hit {
    uint32_t pattern;
    size_t end;
    bool operator<(const Hit& o) const { return end != o.end ? end < o.end : pattern < o.pattern; }
    bool operator==(const Hit& o) const { return pattern == o.pattern && end == o.end; }
};

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::vector<Hit> brute_force(const std::vector<std::string>& patterns, const std::string& text, bool nocase) {
    std::vector<Hit> hits;
    for (uint32_t id = 0; id < patterns.size(); ++id) {
        const std::string& p = patterns[id];
        for (size_t at = 0; at + p.size() <= text.size(); ++at) {
            bool equal = true;
            for (size_t k = 0; k < p.size() && equal; ++k)
                equal = nocase ? lower(p[k]) == lower(text[at + k]) : p[k] == text[at + k];
            if (equal) hits.push_back({id, at + p.size()});
        }
    }
    std::sort(hits.begin(), hits.end());
    return hits;
}

std::vector<Hit> automaton_hits(const AhoCorasick& ac, const std::string& text, size_t split) {
    std::vector<Hit> hits;
    const auto on = [&](uint32_t id, size_t end) { hits.push_back({id, end}); };
    const auto* p = reinterpret_cast<const uint8_t*>(text.data());
    AhoCorasick::State s = ac.scan(AhoCorasick::start(), p, split, 0, on);
    ac.scan(s, p + split, text.size() - split, split, on);
    std::sort(hits.begin(), hits.end());
    return hits;
}

TEST(AhoCorasick, FindsEveryOccurrenceABruteForceSearchFinds) {
    std::mt19937 rng(12345);
    const std::string alphabet = "abAB\x00\xff";
    const auto random_string = [&](size_t len) {
        std::string s;
        for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
        return s;
    };
    for (int round = 0; round < 300; ++round) {
        std::vector<std::string> patterns;
        const size_t count = 1 + rng() % 12;
        for (size_t i = 0; i < count; ++i) patterns.push_back(random_string(1 + rng() % 5));
        const std::string text = random_string(rng() % 200);
        const bool nocase = round % 2 == 1;
        const AhoCorasick ac(patterns, nocase);
        const size_t split = text.empty() ? 0 : rng() % text.size();
        ASSERT_EQ(automaton_hits(ac, text, split), brute_force(patterns, text, nocase))
            << "round " << round << (nocase ? " nocase" : "");
    }
}

TEST(AhoCorasick, ALargeAutomatonWithWideTableEntriesFindsTheSame) {
    std::mt19937 rng(777);
    const auto random_bytes = [&](size_t len) {
        std::string s;
        for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>(rng() % 256));
        return s;
    };
    std::vector<std::string> patterns;
    std::string text = random_bytes(20000);
    for (int i = 0; i < 400; ++i) {
        // Half the patterns are cut from the text, so there is something to find.
        const size_t len = 2 + rng() % 12;
        patterns.push_back(i % 2 == 0 ? text.substr(rng() % (text.size() - len), len) : random_bytes(len));
    }
    patterns.push_back(text.substr(100, 1));  // a one-byte pattern matches often
    const AhoCorasick ac(patterns);
    EXPECT_GT(ac.states() * ac.classes(), 32768u) << "the test wants 32-bit table entries";
    EXPECT_EQ(ac.table_bytes(), ac.states() * ac.classes() * 4);
    const std::vector<Hit> expected = brute_force(patterns, text, false);
    EXPECT_GT(expected.size(), 200u);
    EXPECT_EQ(automaton_hits(ac, text, 12345), expected);
}

TEST(AhoCorasick, OverlappingAndNestedPatternsAreAllReportedLongestFirst) {
    const AhoCorasick ac({"he", "she", "his", "hers", "e"});
    std::vector<Hit> hits;
    const std::string text = "ushers";
    ac.scan(AhoCorasick::start(), reinterpret_cast<const uint8_t*>(text.data()), text.size(), 0,
            [&](uint32_t id, size_t end) { hits.push_back({id, end}); });
    // At "she": she, he, e end together, longest first; then "hers".
    EXPECT_EQ(hits, (std::vector<Hit>{{1, 4}, {0, 4}, {4, 4}, {3, 6}}));
    EXPECT_LT(ac.classes(), 10u) << "unused bytes share one class";
    EXPECT_THROW(AhoCorasick({"ok", ""}), std::invalid_argument);
}

// ---- patterns file -------------------------------------------------------------------------

TEST(PatternSyntax, TextHexEscapesAndQuotes) {
    EXPECT_EQ(parse_pattern("GET /"), "GET /");
    EXPECT_EQ(parse_pattern("|de ad be ef|"), std::string("\xde\xad\xbe\xef"));
    EXPECT_EQ(parse_pattern("|DEAD|beef"), std::string("\xde\xad") + "beef");
    EXPECT_EQ(parse_pattern("a|00|b|0d0a 0d 0a|"), std::string("a\0b\r\n\r\n", 7));
    EXPECT_EQ(parse_pattern("pipe\\|back\\\\quote\\\""), "pipe|back\\quote\"");
    EXPECT_EQ(parse_pattern("\" 220 \""), " 220 ");
    EXPECT_EQ(parse_pattern("\"#!/bin/sh\""), "#!/bin/sh");
    EXPECT_EQ(parse_pattern("a#b"), "a#b");
    EXPECT_EQ(parse_pattern("\"say \\\"hi\\\"\""), "say \"hi\"");
}

TEST(PatternSyntax, BadPatternsSayWhatIsWrong) {
    const auto error_of = [](const std::string& text) -> std::string {
        try {
            parse_pattern(text);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(error_of("|de ad"), "unterminated |...| (no closing '|')");
    EXPECT_EQ(error_of("|abc|"), "odd number of hex digits in |...|");
    EXPECT_EQ(error_of("|zz|"), "'z' is not a hex digit in |...|");
    EXPECT_EQ(error_of("x||"), "empty |...|");
    EXPECT_EQ(error_of("|a b|"), "blank inside a hex byte in |...|");
    EXPECT_EQ(error_of("\"\""), "empty pattern");
    EXPECT_EQ(error_of("\"open"), "unterminated quote (a quoted pattern ends with '\"')");
    EXPECT_EQ(error_of("\"escaped end\\\""), "unterminated quote (a quoted pattern ends with '\"')");
    EXPECT_EQ(error_of("tab\\t"), "unknown escape '\\t' (escapes: \\| \\\\ \\\"; write other bytes as |hex|)");
    EXPECT_EQ(error_of("ends\\"), "a backslash ends the pattern");
    EXPECT_EQ(error_of(std::string(4097, 'x')), "pattern of 4097 bytes (at most 4096)");
}

class PayloadMatchTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_payload_match"};
    const std::string dir_ = scratch_.path();
    void SetUp() override {
        pool_ = std::make_unique<MbufPool>(test::named_pool("pm_test_", {.mbufs = 1023, .data_room = 128}));  // small segments: long frames become chains
    }

    std::string write(const std::string& name, const std::string& text) {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

    rte_mbuf* chain(const Bytes& bytes) {
        rte_mbuf* head = nullptr;
        const size_t room = 128;
        for (size_t at = 0; at < bytes.size(); at += room) {
            rte_mbuf* m = rte_pktmbuf_alloc(pool_->get());
            const size_t n = std::min(room, bytes.size() - at);
            std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(n)), bytes.data() + at, n);
            if (head == nullptr) head = m;
            else EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
        }
        return head;
    }

    // Frames through parse and `stage`; returns, per frame that came out, the pattern it was
    // marked with (0 = unmarked), in order.
    std::vector<uint32_t> run(PayloadMatch& stage, const std::vector<Bytes>& frames) {
        Parse parse(params_of("parse", {}));
        Burst b;
        for (const Bytes& f : frames) {
            rte_mbuf* m = chain(f);
            b.d[b.n++] = PacketDesc{m, 0, saturate_length(rte_pktmbuf_pkt_len(m)), 0, 0};
        }
        parse.process(b);
        stage.process(b);
        std::vector<uint32_t> marks;
        for (const PacketDesc& d : b) {
            EXPECT_EQ(payload_matched(d.mbuf), payload_pattern(d.mbuf) != 0);
            marks.push_back(payload_pattern(d.mbuf));
            rte_pktmbuf_free(d.mbuf);
        }
        EXPECT_EQ(pool_->available(), pool_->capacity());
        return marks;
    }

    std::unique_ptr<MbufPool> pool_;
    StageEnv env_{nullptr, "ids", 0};
};

TEST_F(PayloadMatchTest, PatternFileErrorsArePlacedAtTheirLine) {
    const std::string path = write("bad.patterns", "# header\n\nGET /\n  |0d 0a|  \n|abc|\n");
    PayloadMatch stage(params_of("payload_match", {{"patterns", path}}));
    try {
        stage.open(env_);
        FAIL() << "a bad pattern was accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), path + ":5: odd number of hex digits in |...|");
    }
}

TEST_F(PayloadMatchTest, AMissingOrEmptyPatternsFileIsRefused) {
    PayloadMatch missing(params_of("payload_match", {{"patterns", dir_ + "/absent"}}));
    try {
        missing.open(env_);
        FAIL() << "a missing file was accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().file, "app.yaml");
        EXPECT_EQ(e.where().line, 2);
        EXPECT_NE(e.message().find("cannot read '" + dir_ + "/absent': No such file or directory"), std::string::npos) << e.what();
    }
    const std::string path = write("empty.patterns", "# nothing\n\n");
    PayloadMatch empty(params_of("payload_match", {{"patterns", path}}));
    EXPECT_THROW(empty.open(env_), LocatedError);
}

TEST_F(PayloadMatchTest, TheShippedExamplePatternsLoad) {
    PayloadMatch stage(params_of("payload_match", {{"patterns", test::source_root() + "/conf/data/ids.patterns"}}));
    stage.open(env_);
    ASSERT_GE(stage.patterns().size(), 10u);
    EXPECT_EQ(stage.patterns()[0].bytes, "GET /");
    const auto quoted = std::find_if(stage.patterns().begin(), stage.patterns().end(),
                                     [](const MatchPattern& p) { return p.text == "\"220 \""; });
    ASSERT_NE(quoted, stage.patterns().end());
    EXPECT_EQ(quoted->bytes, "220 ");
}

// ---- crafted packets -----------------------------------------------------------------------

void put16(Bytes& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
}

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

// Ethernet + IPv4 + UDP carrying `payload`, then `padding` bytes after the datagram.
Bytes udp_frame(const Bytes& payload, size_t padding = 0) {
    Bytes b = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
    b.insert(b.end(), {0x45, 0});
    put16(b, static_cast<uint16_t>(20 + 8 + payload.size()));
    b.insert(b.end(), {0, 0, 0, 0, 64, 17, 0, 0, 'E', 'V', 'I', 'L', 10, 0, 0, 2});  // src 69.86.73.76
    put16(b, 1000);
    put16(b, 2000);
    put16(b, static_cast<uint16_t>(8 + payload.size()));
    put16(b, 0);
    b.insert(b.end(), payload.begin(), payload.end());
    b.resize(b.size() + padding, 'X');
    return b;
}

Bytes arp_like_frame(const std::string& body) {
    Bytes b = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5};  // local experimental
    b.insert(b.end(), body.begin(), body.end());
    return b;
}

TEST_F(PayloadMatchTest, MarksTransportPayloadMatchesButNotHeaderBytesOrPadding) {
    const std::string path = write("p.patterns", "EVIL\nXXXX\nattack\n");
    PayloadMatch stage(params_of("payload_match", {{"patterns", path}}));
    stage.open(env_);
    const std::vector<uint32_t> marks = run(stage, {
        udp_frame(bytes_of("an attack here")),   // payload match: pattern 3
        udp_frame(bytes_of("clean"), 10),        // EVIL is in the IP header, XXXX in the padding
        arp_like_frame("no L4 here: EVIL"),      // non-IP: the whole frame is searched
    });
    EXPECT_EQ(marks, (std::vector<uint32_t>{3, 0, 1}));
    EXPECT_EQ(event(stage, "matched"), 2u);
    EXPECT_EQ(stage.pattern_packets(0), 1u);
    EXPECT_EQ(stage.pattern_packets(1), 0u);
    EXPECT_EQ(stage.pattern_packets(2), 1u);
}

TEST_F(PayloadMatchTest, APatternSpanningTwoSegmentsIsFound) {
    const std::string path = write("p.patterns", "NEEDLE-IN-TWO-SEGMENTS\n");
    PayloadMatch stage(params_of("payload_match", {{"patterns", path}}));
    stage.open(env_);
    // Headers take 42 bytes; the pattern starts at byte 120 of the frame and crosses 128.
    Bytes payload(78, '.');
    const Bytes needle = bytes_of("NEEDLE-IN-TWO-SEGMENTS");
    payload.insert(payload.end(), needle.begin(), needle.end());
    payload.resize(payload.size() + 100, '.');
    EXPECT_EQ(run(stage, {udp_frame(payload)}), std::vector<uint32_t>{1});
}

TEST_F(PayloadMatchTest, TheFirstPatternFoundMarksAndEachPatternCountsOncePerPacket) {
    const std::string path = write("p.patterns", "bb\naa\n");
    PayloadMatch stage(params_of("payload_match", {{"patterns", path}}));
    stage.open(env_);
    EXPECT_EQ(run(stage, {udp_frame(bytes_of("xaaxbbaaaa")), udp_frame(bytes_of("bbaa"))}), (std::vector<uint32_t>{2, 1}));
    EXPECT_EQ(stage.pattern_packets(0), 2u);
    EXPECT_EQ(stage.pattern_packets(1), 2u);
}

TEST_F(PayloadMatchTest, NocaseMatchesEitherCase) {
    const std::string path = write("p.patterns", "Select|20|*\n");
    PayloadMatch exact(params_of("payload_match", {{"patterns", path}}));
    PayloadMatch folded(params_of("payload_match", {{"patterns", path}, {"nocase", "true"}}));
    exact.open(env_);
    folded.open(env_);
    const std::vector<Bytes> frames = {udp_frame(bytes_of("sELECT * FROM t")), udp_frame(bytes_of("Select *"))};
    EXPECT_EQ(run(exact, frames), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(run(folded, frames), (std::vector<uint32_t>{1, 1}));
}

TEST_F(PayloadMatchTest, KeepMatchingDropsTheRestAsNoMatch) {
    const std::string path = write("p.patterns", "attack\n");
    PayloadMatch stage(params_of("payload_match", {{"patterns", path}, {"mode", "keep_matching"}}));
    stage.open(env_);
    EXPECT_EQ(run(stage, {udp_frame(bytes_of("fine")), udp_frame(bytes_of("attack!")), udp_frame(bytes_of("ok"))}),
              std::vector<uint32_t>{1});
    ASSERT_EQ(stage.drop_reasons(), std::vector<std::string>{"no_match"});
    EXPECT_EQ(stage.stats().reason[0].get(), 2u);
}

// ---- every shared capture ------------------------------------------------------------------

TEST_F(PayloadMatchTest, EveryReadableSharedCaptureIsSearchedAndPassedWhole) {
    // Malformed and truncated captures included: the payload bounds come from headers `parse`
    // vouched for, clipped to the frame, so nothing is read past a packet (run under ASan).
    PayloadMatch stage(params_of("payload_match", {{"patterns", test::source_root() + "/conf/data/ids.patterns"}}));
    stage.open(env_);
    int serial = 0, captures = 0;
    for (const auto& e : fs::directory_iterator(test::pcaps_dir())) {
        const std::string ext = e.path().extension().string();
        if (ext != ".pcap" && ext != ".pcapng") continue;
        SCOPED_TRACE(e.path().filename().string());
        PcapSource src(params_of("pcap", {{"file", e.path().string()}}));
        MbufPoolSpec spec;
        spec.name = "pm_all_" + std::to_string(serial++);
        MbufPool pool(spec);
        StageEnv env{&pool, "src", 0};
        try {
            src.open(env);
        } catch (const LocatedError&) {
            continue;  // refused by the source (pcap_source_test checks why)
        }
        ++captures;
        Parse parse(params_of("parse", {}));
        uint64_t in = 0, out = 0;
        Burst b;
        for (;;) {
            b.n = 0;
            const SourceStatus st = src.produce(b);
            if (st == SourceStatus::Done) break;
            if (st == SourceStatus::Idle) continue;
            in += b.n;
            parse.process(b);
            stage.process(b);
            out += b.n;
            for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
        }
        src.close();
        EXPECT_EQ(in, out) << "mark mode passes every packet";
        EXPECT_EQ(pool.available(), pool.capacity());
    }
    EXPECT_GE(captures, 25);
    EXPECT_GT(event(stage, "matched"), 0u);
}

// ---- against tshark ------------------------------------------------------------------------

bool tshark_available() {
    static const bool available = [] {
        if (test::run_command("tshark --version").status == 0) return true;
        test::run_command("bash '" + test::source_root() + "/scripts/bootstrap.sh' tshark");
        return test::run_command("tshark --version").status == 0;
    }();
    return available;
}

struct OraclePattern {
    std::string file_syntax;  // as written in a patterns file
    std::string tshark;       // the same bytes in a tshark display filter
};

TEST_F(PayloadMatchTest, PerPatternPacketCountsEqualTsharksPayloadContains) {
    if (!tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const std::vector<OraclePattern> oracle = {
        {"HTTP/1.1", "\"HTTP/1.1\""},     {"GET /", "\"GET /\""},       {"google", "\"google\""},
        {"|16 03 01|", "16:03:01"},       {"|00 01 00 01|", "00:01:00:01"}, {"Host:|20|", "\"Host: \""},
        {"Content-Type", "\"Content-Type\""},
    };
    std::string file;
    for (const OraclePattern& o : oracle) file += o.file_syntax + "\n";
    const std::string patterns = write("oracle.patterns", file);
    int serial = 0;
    for (const char* capture : {"pcpp__example.pcap", "suricata__tls-subjectaltname__input.pcap", "retina__quic.pcap"}) {
        SCOPED_TRACE(capture);
        const std::string path = test::pcaps_dir() + "/" + capture;
        PcapSource src(params_of("pcap", {{"file", path}}));
        MbufPoolSpec spec;
        spec.name = "pm_cap_" + std::to_string(serial++);
        MbufPool pool(spec);
        StageEnv env{&pool, "src", 0};
        src.open(env);
        Parse parse(params_of("parse", {}));
        PayloadMatch stage(params_of("payload_match", {{"patterns", patterns}}));
        stage.open(env);
        Burst b;
        for (;;) {
            b.n = 0;
            const SourceStatus st = src.produce(b);
            if (st == SourceStatus::Done) break;
            if (st == SourceStatus::Idle) continue;
            parse.process(b);
            stage.process(b);
            for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
        }
        src.close();
        for (size_t i = 0; i < oracle.size(); ++i) {
            const std::string& t = oracle[i].tshark;
            const test::CommandResult r = test::run_command("tshark -n -r '" + path + "' -Y 'tcp.payload contains " + t +
                                                            " || udp.payload contains " + t + "' | wc -l");
            EXPECT_EQ(stage.pattern_packets(i), std::stoull(r.out)) << oracle[i].file_syntax;
        }
    }
}

}  // namespace
}  // namespace tp
