// The message-passing kernels on the tiles backend, each against its serial reference, for
// rank counts that include non-powers of two, in both styles; the shapes each kernel refuses;
// and mp-shift's grids and model fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "framework/mp/tiles_world.hpp"

using namespace tp::mp;

namespace {
// Each kernel as the Epiphany study wrote it and as tilepipe did before.
constexpr kernels::Style kStyles[] = {kernels::Style::Study, kernels::Style::Tilepipe};

template <typename F>
bool verified(int ranks, F&& kernel) {
    TilesOptions o;
    o.ranks = ranks;
    o.pin = false;
    o.replace_buffer = 1008;  // sendrecv_replace in single segments: blocks many times larger
    bool ok = false;
    run_tiles(o, [&](Comm& c) {
        const kernels::Result r = kernel(c);
        if (c.rank() == 0) ok = r.verified;
        EXPECT_GT(r.flops, 0);
        EXPECT_GE(r.comm_share, 0);
        EXPECT_LE(r.comm_share, 1);
    });
    return ok;
}
}  // namespace

TEST(MpKernels, CannonMatchesSerial) {
    for (auto style : kStyles)
        for (int p : {1, 4, 9}) EXPECT_TRUE(verified(p, [&](Comm& c) { return kernels::sgemm(c, 72, style); })) << p;
}

TEST(MpKernels, NBodyMatchesSerial) {
    for (auto style : kStyles)
        for (int p : {1, 3, 4, 6}) EXPECT_TRUE(verified(p, [&](Comm& c) { return kernels::nbody(c, 240, style, 3); })) << p;
}

TEST(MpKernels, StencilMatchesSerial) {
    for (auto style : kStyles)
        for (int p : {1, 2, 5, 6, 16})
            EXPECT_TRUE(verified(p, [&](Comm& c) { return kernels::stencil(c, 70, 12, style); })) << p;
}

TEST(MpKernels, HybridStencilMatchesSerial) {
    // Ranks of several tiles, each sweeping its rows on its team (more tiles than rows too).
    for (int per : {2, 3})
        for (int p : {1, 4}) {
            TilesOptions o;
            o.ranks = p;
            o.tiles_per_rank = per;
            o.pin = false;
            bool ok = false;
            run_tiles(o, [&](Comm& c) {
                for (auto style : kStyles) {
                    const kernels::Result r = kernels::stencil(c, c.size() == 1 ? 40 : 4, 6, style);
                    if (c.rank() == 0) ok = r.verified;
                    if (c.rank() == 0) EXPECT_TRUE(ok) << per << " tiles, " << p << " ranks";
                }
            });
        }
}

TEST(MpKernels, FftMatchesSerial) {
    for (auto style : kStyles)
        for (int p : {1, 2, 4, 8}) EXPECT_TRUE(verified(p, [&](Comm& c) { return kernels::fft2d(c, 64, style); })) << p;
}

TEST(MpKernels, ShapesThatDoNotFitAreRefused) {
    EXPECT_THROW(kernels::check_shape("mp-sgemm", 6, 60), std::invalid_argument);   // 6 is not a square
    EXPECT_THROW(kernels::check_shape("mp-sgemm", 4, 61), std::invalid_argument);   // 2 does not divide 61
    EXPECT_THROW(kernels::check_shape("mp-fft", 4, 48), std::invalid_argument);     // not a power of two
    EXPECT_THROW(kernels::check_shape("mp-nbody", 3, 100), std::invalid_argument);  // 3 does not divide 100
    EXPECT_THROW(kernels::check_shape("mp-sgemm", 1, 65536), std::invalid_argument); // n * n overflows int
    EXPECT_NO_THROW(kernels::check_shape("mp-stencil", 6, 100));
}

TEST(MpShift, EveryGridAndSizeIsMeasuredOnEveryRank) {
    TilesOptions o;
    o.ranks = 4;
    o.pin = false;
    o.replace_buffer = 1008;
    run_tiles(o, [](Comm& c) {
        const std::vector<kernels::ShiftRow> rows = kernels::shift(c, {8, 3000}, 5);
        ASSERT_EQ(rows.size(), 4u);
        EXPECT_STREQ(rows[0].grid, "1d");
        EXPECT_STREQ(rows[3].grid, "2d");
        EXPECT_EQ(rows[3].bytes, 3000u);
        for (const auto& r : rows) EXPECT_GT(r.us, 0);
    });
}

TEST(MpShift, FitRecoversTheModelAndDropsAlpha1WhenPiecesFollowBytes) {
    // t = 3 us + 0.5 us per piece + 2 ns per byte, over sizes and buffers.
    std::vector<kernels::ShiftPoint> pts;
    for (double m : {256.0, 1024.0, 4096.0, 65536.0})
        for (double b : {256.0, 1008.0, 65536.0}) {
            const double k = std::max(1.0, std::ceil(m / b));
            pts.push_back({k, m, 3 + 0.5 * k + 0.002 * m});
        }
    const kernels::ShiftFit f = kernels::fit_shift(pts);
    ASSERT_TRUE(f.has_alpha1);
    EXPECT_NEAR(f.alpha0_us, 3, 1e-5);
    EXPECT_NEAR(f.alpha1_us, 0.5, 1e-5);
    EXPECT_NEAR(f.beta_ns, 2, 1e-5);
    // One piece per message (a backend staging whole messages): alpha1 folds into alpha0.
    std::vector<kernels::ShiftPoint> whole;
    for (double m : {256.0, 4096.0, 65536.0}) whole.push_back({1, m, 3.5 + 0.002 * m});
    const kernels::ShiftFit g = kernels::fit_shift(whole);
    EXPECT_FALSE(g.has_alpha1);
    EXPECT_NEAR(g.alpha0_us, 3.5, 1e-5);
    EXPECT_NEAR(g.beta_ns, 2, 1e-5);
}
