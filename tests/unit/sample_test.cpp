// sample: keeps exactly one packet in N counting across bursts, or each packet with a
// probability from a seeded generator (same seed, same packets); the rest are dropped under
// "sampled_out".
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/sample.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

using Given = test::Given;

ParamValues sample_params(const Given& given) { return test::stage_params("sample", given); }

class SampleTest : public testing::Test {
protected:
    SampleTest() {
        pool_ = std::make_unique<MbufPool>(test::named_pool("sample_test_", {.mbufs = 1023}));
    }

    // Pushes packets numbered 0..count-1 through `s` in bursts of `burst`; returns the numbers
    // of the packets that came out.
    std::vector<uint32_t> run(Sample& s, uint32_t count, uint16_t burst = kBurstMax) {
        std::vector<uint32_t> kept;
        for (uint32_t at = 0; at < count; at += burst) {
            Burst b;
            for (uint32_t i = at; i < count && b.n < burst; ++i) {
                rte_mbuf* m = rte_pktmbuf_alloc(pool_->get());
                std::memcpy(rte_pktmbuf_append(m, 64), &i, sizeof i);
                b.d[b.n++] = PacketDesc{m, 0, 64, 0, 0};
            }
            s.process(b);
            for (const PacketDesc& d : b) {
                uint32_t number;
                std::memcpy(&number, rte_pktmbuf_mtod(d.mbuf, const void*), sizeof number);
                kept.push_back(number);
                rte_pktmbuf_free(d.mbuf);
            }
        }
        EXPECT_EQ(pool_->available(), pool_->capacity()) << "a dropped packet was not freed";
        return kept;
    }

    std::unique_ptr<MbufPool> pool_;
};

TEST(SampleRegistration, IsAProcessorWithEveryProbabilityAndSeed) {
    const StageInfo* info = StageRegistry::instance().find("sample");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    EXPECT_EQ(info->find_param("every")->default_text, "16");
    EXPECT_EQ(info->find_param("probability")->type, ParamType::Double);
    EXPECT_EQ(info->find_param("seed")->type, ParamType::Uint);
}

TEST_F(SampleTest, EveryNKeepsTheFirstPacketAndEveryNthAfterItAcrossBursts) {
    Sample s(sample_params({{"every", "10"}}));
    const std::vector<uint32_t> kept = run(s, 100, 7);  // bursts of 7: the count runs across them
    EXPECT_EQ(kept, (std::vector<uint32_t>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}));
    ASSERT_EQ(s.drop_reasons(), std::vector<std::string>{"sampled_out"});
    EXPECT_EQ(s.stats().reason[0].get(), 90u);
}

TEST_F(SampleTest, EveryOneKeepsEverything) {
    Sample s(sample_params({{"every", "1"}}));
    EXPECT_EQ(run(s, 50).size(), 50u);
}

TEST_F(SampleTest, ProbabilityKeepsAboutThatShare) {
    Sample s(sample_params({{"probability", "0.25"}, {"seed", "42"}}));
    const size_t kept = run(s, 100000).size();
    // Binomial: sd = sqrt(n p (1-p)) ~ 137; allow more than 7 sd.
    EXPECT_NEAR(double(kept), 25000.0, 1000.0);
}

TEST_F(SampleTest, TheSameSeedKeepsTheSamePacketsAndAnotherSeedOthers) {
    Sample a(sample_params({{"probability", "0.1"}, {"seed", "7"}}));
    Sample b(sample_params({{"probability", "0.1"}, {"seed", "7"}}));
    Sample c(sample_params({{"probability", "0.1"}, {"seed", "8"}}));
    const std::vector<uint32_t> ka = run(a, 5000), kb = run(b, 5000, 5), kc = run(c, 5000);
    EXPECT_EQ(ka, kb) << "burst boundaries do not change the draw";
    EXPECT_NE(ka, kc);
}

TEST_F(SampleTest, ProbabilityOneKeepsEverythingAndTinyProbabilitiesAlmostNothing) {
    Sample all(sample_params({{"probability", "1"}}));
    EXPECT_EQ(run(all, 1000).size(), 1000u);
    Sample few(sample_params({{"probability", "1e-9"}}));
    EXPECT_LE(run(few, 1000).size(), 1u);
}

TEST(SampleParams, BadValuesAreRefusedAtTheirParameter) {
    try {
        Sample s(sample_params({{"every", "0"}}));
        FAIL() << "every 0 accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 2);
    }
    for (const char* p : {"1.5", "-0.1", "nan"}) {
        try {
            Sample s(sample_params({{"probability", p}}));
            FAIL() << "probability " << p << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(e.where().line, 2) << p;
        }
    }
    try {
        Sample s(sample_params({{"probability", "0.5"}, {"every", "4"}}));
        FAIL() << "every and probability together accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 3) << "points at 'every'";
        EXPECT_NE(e.message().find("only one"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace tp
