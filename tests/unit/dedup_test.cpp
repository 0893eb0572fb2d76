// dedup: a frame identical byte for byte to one of the last `window` frames passed is dropped
// under "duplicate"; anything else passes, including look-alikes and frames whose twin left
// the window. Checked on crafted frames and against a brute-force model on a shared capture.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/dedup.hpp"
#include "stages/pcap_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

using Given = test::Given;

ParamValues params_of(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

std::string frame_bytes(const rte_mbuf* m) {
    std::string s(rte_pktmbuf_pkt_len(m), '\0');
    const void* p = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), s.data());
    if (p != s.data()) std::memcpy(s.data(), p, s.size());
    return s;
}

class DedupTest : public testing::Test {
protected:
    DedupTest() {
        pool_ = std::make_unique<MbufPool>(test::named_pool("dedup_test_", {.mbufs = 1023, .data_room = 256}));
    }

    // A frame as a chain of segments of at most `seg` bytes.
    rte_mbuf* chain(const std::string& bytes, uint16_t seg) {
        rte_mbuf* head = nullptr;
        for (size_t at = 0; at < bytes.size(); at += seg) {
            rte_mbuf* m = rte_pktmbuf_alloc(pool_->get());
            const size_t n = std::min<size_t>(seg, bytes.size() - at);
            std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(n)), bytes.data() + at, n);
            if (head == nullptr) head = m;
            else EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
        }
        return head;
    }

    // Pushes the frames through `d` one burst at a time (bursts of `burst`); returns what passed.
    std::vector<std::string> run(Dedup& d, const std::vector<std::string>& frames, uint16_t seg = 256,
                                 uint16_t burst = kBurstMax) {
        std::vector<std::string> out;
        for (size_t at = 0; at < frames.size(); at += burst) {
            Burst b;
            for (size_t i = at; i < frames.size() && b.n < burst; ++i) {
                rte_mbuf* m = chain(frames[i], seg);
                b.d[b.n++] = PacketDesc{m, 0, saturate_length(rte_pktmbuf_pkt_len(m)), 0, 0};
            }
            d.process(b);
            for (const PacketDesc& desc : b) {
                out.push_back(frame_bytes(desc.mbuf));
                rte_pktmbuf_free(desc.mbuf);
            }
        }
        EXPECT_EQ(pool_->available(), pool_->capacity()) << "a duplicate was not freed";
        return out;
    }

    std::unique_ptr<MbufPool> pool_;
};

uint64_t event(const Stage& s, const std::string& name) {
    const auto& names = s.events();
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it == names.end() ? 0 : s.stats().event[it - names.begin()].get();
}

const std::string A(60, 'a'), B(60, 'b'), C(60, 'c');

TEST(DedupRegistration, IsAProcessorWithWindowAndMemory) {
    const StageInfo* info = StageRegistry::instance().find("dedup");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    EXPECT_EQ(info->find_param("window")->default_text, "1024");
    EXPECT_NE(info->find_param("copy_bytes"), nullptr);
}

TEST_F(DedupTest, DuplicatesWithinTheWindowAreDroppedInBurstAndAcrossBursts) {
    Dedup d(params_of("dedup", {}));
    EXPECT_EQ(run(d, {A, B, A, C, B, C}, 256, 4), (std::vector<std::string>{A, B, C}));
    ASSERT_EQ(d.drop_reasons(), std::vector<std::string>{"duplicate"});
    EXPECT_EQ(d.stats().reason[0].get(), 3u);
}

TEST_F(DedupTest, FramesDifferingInOneByteOrInLengthBothPass) {
    Dedup d(params_of("dedup", {}));
    std::string a2 = A;
    a2.back() = 'z';
    EXPECT_EQ(run(d, {A, a2, A + "a", A}), (std::vector<std::string>{A, a2, A + "a"}));
}

TEST_F(DedupTest, AFrameWhoseTwinLeftTheWindowPasses) {
    Dedup d(params_of("dedup", {{"window", "2"}}));
    // After A, B, C the window holds B and C: A passes again, B is still a duplicate.
    EXPECT_EQ(run(d, {A, B, C, A, C}), (std::vector<std::string>{A, B, C, A}));
}

TEST_F(DedupTest, FramesInSeveralSegmentsAreComparedWholeWhateverTheSplit) {
    Dedup d(params_of("dedup", {}));
    std::string big(700, 'x');
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
    std::string other = big;
    other[650] ^= 1;  // differs in the third segment only
    std::vector<std::string> out = run(d, {big}, 256);
    out = run(d, {big, other}, 100);  // the same bytes split differently are a duplicate
    EXPECT_EQ(out, std::vector<std::string>{other});
}

TEST_F(DedupTest, TooLittleMemoryShortensTheWindowButNeverDropsADistinctFrame) {
    // Room for two 60-byte copies: the first leaves before the window (10) would let it.
    Dedup d(params_of("dedup", {{"window", "10"}, {"copy_bytes", "130"}}));
    EXPECT_EQ(run(d, {A, B, C, A, C}, 256, 1), (std::vector<std::string>{A, B, C, A}));
    // A's copy is overwritten by C's; when A's turn to leave a window of 3 comes (at D), it
    // is counted as having left early.
    Dedup three(params_of("dedup", {{"window", "3"}, {"copy_bytes", "130"}}));
    const std::string D(60, 'd');
    EXPECT_EQ(run(three, {A, B, C, D}, 256, 1), (std::vector<std::string>{A, B, C, D}));
    EXPECT_EQ(event(three, "window_shortened"), 1u);
    Dedup tiny(params_of("dedup", {{"copy_bytes", "64"}}));
    const std::string long_frame(100, 'l');
    EXPECT_EQ(run(tiny, {long_frame, long_frame}), (std::vector<std::string>{long_frame, long_frame}));
    EXPECT_EQ(event(tiny, "too_long"), 2u);
}

TEST(DedupParams, BadValuesAreRefusedAtTheirParameter) {
    try {
        Dedup d(params_of("dedup", {{"window", "0"}}));
        FAIL() << "window 0 accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 2);
    }
    EXPECT_THROW(Dedup(params_of("dedup", {{"copy_bytes", "10"}})), LocatedError);
    // The copies a window implies must fit the memory bound, as copy_bytes must (what
    // validate checks, not an allocation failing at run time).
    try {
        Dedup d(params_of("dedup", {{"window", "16M"}}));
        FAIL() << "a 32 GiB window accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), "app.yaml:2:5: a window of 16000000 frames at 2048 bytes each needs 30 GiB for their "
                                         "copies, more than 16 GiB: bound them with copy_bytes");
    }
}

// The specification, written the slow way: the window is the last `window` frames passed.
std::vector<bool> model_verdicts(const std::vector<std::string>& frames, size_t window) {
    std::deque<std::string> recent;
    std::map<std::string, int> in_window;
    std::vector<bool> passed;
    for (const std::string& f : frames) {
        if (in_window[f] > 0) {
            passed.push_back(false);
            continue;
        }
        passed.push_back(true);
        recent.push_back(f);
        ++in_window[f];
        if (recent.size() > window) {
            --in_window[recent.front()];
            recent.pop_front();
        }
    }
    return passed;
}

TEST(DedupOnACapture, MatchesTheModelOnATwiceReplayedCapture) {
    const std::string path = test::pcaps_dir() + "/pcpp__example.pcap";
    for (const uint64_t window : {64ull, 1000ull, 10000ull}) {
        SCOPED_TRACE("window " + std::to_string(window));
        PcapSource src(params_of("pcap", {{"file", path}, {"loop", "2"}}));
        MbufPoolSpec spec;
        spec.name = "dedup_cap_" + std::to_string(window);
        MbufPool pool(spec);
        StageEnv env{&pool, "src", 0};
        src.open(env);
        Dedup d(params_of("dedup", {{"window", std::to_string(window)}}));
        std::vector<std::string> frames;
        std::vector<bool> passed;
        Burst b;
        for (;;) {
            b.n = 0;
            const SourceStatus st = src.produce(b);
            if (st == SourceStatus::Done) break;
            if (st == SourceStatus::Idle) continue;
            // Remember the burst, then see which of it dedup keeps (it keeps order).
            std::vector<rte_mbuf*> sent;
            for (const PacketDesc& desc : b) {
                frames.push_back(frame_bytes(desc.mbuf));
                sent.push_back(desc.mbuf);
            }
            std::vector<std::string> sent_frames(frames.end() - b.n, frames.end());
            d.process(b);
            size_t k = 0;
            for (size_t i = 0; i < sent.size(); ++i) {
                const bool kept = k < b.n && b.d[k].mbuf == sent[i];
                passed.push_back(kept);
                if (kept) ++k;
            }
            for (const PacketDesc& desc : b) rte_pktmbuf_free(desc.mbuf);
        }
        src.close();
        ASSERT_EQ(frames.size(), 2 * 4631u);
        const std::vector<bool> expected = model_verdicts(frames, window);
        EXPECT_TRUE(passed == expected);
        const auto kept = std::count(passed.begin(), passed.end(), true);
        EXPECT_EQ(uint64_t(frames.size() - kept), d.stats().reason[0].get());
        if (window == 10000) EXPECT_LE(kept, 4631) << "the whole second replay is duplicates";
        EXPECT_EQ(pool.available(), pool.capacity());
    }
}

}  // namespace
}  // namespace tp
