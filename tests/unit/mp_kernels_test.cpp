// The message-passing kernels on the tiles backend, each against its serial reference, for
// rank counts that include non-powers of two; and the shapes each kernel refuses.
#include <gtest/gtest.h>

#include <stdexcept>

#include "apps/mp/kernels.hpp"
#include "framework/mp/tiles_world.hpp"

using namespace tp::mp;

namespace {
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
    for (int p : {1, 4, 9}) EXPECT_TRUE(verified(p, [](Comm& c) { return kernels::sgemm(c, 72); })) << p;
}

TEST(MpKernels, NBodyMatchesSerial) {
    for (int p : {1, 3, 4, 6}) EXPECT_TRUE(verified(p, [](Comm& c) { return kernels::nbody(c, 240); })) << p;
}

TEST(MpKernels, StencilMatchesSerial) {
    for (int p : {1, 2, 5, 6, 16}) EXPECT_TRUE(verified(p, [](Comm& c) { return kernels::stencil(c, 70, 12); })) << p;
}

TEST(MpKernels, FftMatchesSerial) {
    for (int p : {1, 2, 4, 8}) EXPECT_TRUE(verified(p, [](Comm& c) { return kernels::fft2d(c, 64); })) << p;
}

TEST(MpKernels, ShapesThatDoNotFitAreRefused) {
    EXPECT_THROW(kernels::check_shape("mp-sgemm", 6, 60), std::invalid_argument);   // 6 is not a square
    EXPECT_THROW(kernels::check_shape("mp-sgemm", 4, 61), std::invalid_argument);   // 2 does not divide 61
    EXPECT_THROW(kernels::check_shape("mp-fft", 4, 48), std::invalid_argument);     // not a power of two
    EXPECT_THROW(kernels::check_shape("mp-nbody", 3, 100), std::invalid_argument);  // 3 does not divide 100
    EXPECT_THROW(kernels::check_shape("mp-sgemm", 1, 65536), std::invalid_argument); // n * n overflows int
    EXPECT_NO_THROW(kernels::check_shape("mp-stencil", 6, 100));
}
