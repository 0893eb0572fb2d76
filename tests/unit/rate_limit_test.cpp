// rate_limit: a DPDK rte_meter token bucket. Back-to-back packets pass while the bucket lasts,
// then only at the rate; red packets are dropped under "over_rate" (or only marked), and every
// packet carries its color in the mbuf.
#include <gtest/gtest.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_meter.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/rate_limit.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

using Given = test::Given;

ParamValues rate_limit_params(const Given& given) { return test::stage_params("rate_limit", given); }

uint64_t event(const Stage& s, const std::string& name) {
    const auto& names = s.events();
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it == names.end() ? 0 : s.stats().event[it - names.begin()].get();
}

class RateLimitTest : public testing::Test {
protected:
    RateLimitTest() {
        pool_ = std::make_unique<MbufPool>(test::named_pool("rate_test_", {.mbufs = 1023}));
    }

    // Sends `count` frames of `size` bytes back to back; returns the colors of those that came
    // out, in order.
    std::vector<uint8_t> send(RateLimit& r, uint32_t count, uint16_t size = 100) {
        std::vector<uint8_t> colors;
        for (uint32_t at = 0; at < count; at += kBurstMax) {
            Burst b;
            for (uint32_t i = at; i < count && b.n < kBurstMax; ++i) {
                rte_mbuf* m = rte_pktmbuf_alloc(pool_->get());
                std::memset(rte_pktmbuf_append(m, size), 0, size);
                b.d[b.n++] = PacketDesc{m, 0, size, 0, 0};
            }
            r.process(b);
            for (const PacketDesc& d : b) {
                colors.push_back(meter_color(d.mbuf));
                rte_pktmbuf_free(d.mbuf);
            }
        }
        EXPECT_EQ(pool_->available(), pool_->capacity()) << "a dropped packet was not freed";
        return colors;
    }

    std::unique_ptr<MbufPool> pool_;
    StageEnv env_{nullptr, "police", 0};
};

size_t count_of(const std::vector<uint8_t>& colors, rte_color c) {
    return size_t(std::count(colors.begin(), colors.end(), uint8_t(c)));
}

TEST(RateLimitRegistration, IsAProcessorWithRateOrPpsAndABurst) {
    const StageInfo* info = StageRegistry::instance().find("rate_limit");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Processor);
    EXPECT_TRUE(info->find_param("burst")->required);
    EXPECT_EQ(info->find_param("mode")->choices, (std::vector<std::string>{"drop", "mark"}));
    EXPECT_EQ(info->find_param("meter")->choices, (std::vector<std::string>{"srtcm", "trtcm"}));
    for (const char* p : {"rate", "pps", "excess_burst", "peak_rate", "peak_burst"})
        EXPECT_NE(info->find_param(p), nullptr) << p;
}

TEST_F(RateLimitTest, BackToBackPacketsPassWhileTheBucketLastsThenAreDropped) {
    // 1 packet per second: no token comes back during the test.
    RateLimit r(rate_limit_params({{"pps", "1"}, {"burst", "10"}}));
    r.open(env_);
    const std::vector<uint8_t> colors = send(r, 100);
    EXPECT_EQ(colors.size(), 10u);
    EXPECT_EQ(count_of(colors, RTE_COLOR_GREEN), 10u);
    ASSERT_EQ(r.drop_reasons(), std::vector<std::string>{"over_rate"});
    EXPECT_EQ(r.stats().reason[0].get(), 90u);
    EXPECT_EQ(event(r, "red"), 90u);
}

TEST_F(RateLimitTest, TheByteRateCountsFrameBytes) {
    // 800 b/s = 100 B/s with a 1000-byte bucket: ten 100-byte frames, then nothing for a second.
    RateLimit r(rate_limit_params({{"rate", "800"}, {"burst", "1000"}}));
    r.open(env_);
    EXPECT_EQ(send(r, 50, 100).size(), 10u);
    EXPECT_EQ(send(r, 10, 60).size(), 0u);
}

TEST_F(RateLimitTest, AfterThePauseTheTokensThatPassAreTheRateTimesTheTimeElapsed) {
    // Bounds come from clock readings around each step, so a loaded machine that delays this
    // thread widens them instead of breaking the test.
    using Clock = std::chrono::steady_clock;
    RateLimit r(rate_limit_params({{"pps", "2000"}, {"burst", "1000"}}));
    r.open(env_);
    const auto drain_start = Clock::now();
    send(r, 1500);  // empties the full bucket
    const auto drain_end = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto send_start = Clock::now();
    const size_t passed = send(r, 1000).size();
    const auto send_end = Clock::now();
    const auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
    // The meter's clock is the TSC at DPDK's estimate of its frequency: allow 2% for that
    // estimate and one token for rounding.
    EXPECT_LE(double(passed), std::min(1000.0, 2000 * seconds(drain_start, send_end) * 1.02 + 1));
    EXPECT_GE(double(passed), std::min(1000.0, 2000 * seconds(drain_end, send_start) * 0.98 - 1));
    EXPECT_GE(passed, 350u) << "200 ms at 2000 pps";
}

TEST_F(RateLimitTest, MarkModePassesEverythingWithItsColorInTheMbuf) {
    RateLimit r(rate_limit_params({{"pps", "1"}, {"burst", "5"}, {"mode", "mark"}}));
    r.open(env_);
    const std::vector<uint8_t> colors = send(r, 20);
    ASSERT_EQ(colors.size(), 20u);
    for (size_t i = 0; i < colors.size(); ++i)
        EXPECT_EQ(colors[i], i < 5 ? RTE_COLOR_GREEN : RTE_COLOR_RED) << i;
    EXPECT_EQ(r.stats().drops.get(), 0u);
    EXPECT_EQ(event(r, "red"), 15u);
}

TEST_F(RateLimitTest, SrtcmExcessBurstPassesAYellowBand) {
    RateLimit r(rate_limit_params({{"pps", "1"}, {"burst", "10"}, {"excess_burst", "5"}}));
    r.open(env_);
    const std::vector<uint8_t> colors = send(r, 40);
    ASSERT_EQ(colors.size(), 15u);
    EXPECT_EQ(count_of(colors, RTE_COLOR_GREEN), 10u);
    EXPECT_EQ(count_of(colors, RTE_COLOR_YELLOW), 5u);
    EXPECT_EQ(event(r, "yellow"), 5u);
    EXPECT_EQ(r.stats().reason[0].get(), 25u);
}

TEST_F(RateLimitTest, TrtcmGreenUpToTheCommittedBucketYellowUpToThePeakBucket) {
    RateLimit r(rate_limit_params({{"meter", "trtcm"}, {"pps", "1"}, {"burst", "10"}, {"peak_rate", "2"}, {"peak_burst", "25"}}));
    r.open(env_);
    const std::vector<uint8_t> colors = send(r, 100);
    EXPECT_EQ(count_of(colors, RTE_COLOR_GREEN), 10u);
    EXPECT_EQ(count_of(colors, RTE_COLOR_YELLOW), 15u);
    EXPECT_EQ(colors.size(), 25u);
}

TEST(RateLimitParams, BadCombinationsAreRefusedAtAParameter) {
    EXPECT_THROW(RateLimit(rate_limit_params({{"burst", "10"}})), LocatedError) << "neither rate nor pps";
    try {
        RateLimit r(rate_limit_params({{"rate", "1e6"}, {"pps", "100"}, {"burst", "10"}}));
        FAIL() << "rate and pps together accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 3) << "points at pps";
    }
    EXPECT_THROW(RateLimit(rate_limit_params({{"pps", "100"}, {"burst", "0"}})), LocatedError);
    EXPECT_THROW(RateLimit(rate_limit_params({{"pps", "100"}, {"burst", "-3"}})), LocatedError);
    EXPECT_THROW(RateLimit(rate_limit_params({{"meter", "trtcm"}, {"pps", "100"}, {"peak_rate", "50"}, {"burst", "5"}})),
                 LocatedError)
        << "a peak below the committed rate";
}

}  // namespace
}  // namespace tp
