// The benches' tables show every figure: one too small for its column's decimals (a one-by-one
// round trip's Mtasks/s on a loaded host) keeps its significant digits instead of reading 0.
#include <gtest/gtest.h>

#include "apps/bench/harness.hpp"

namespace tp::bench {
namespace {

TEST(BenchTable, ASmallFigureIsNotPrintedAsZero) {
    EXPECT_EQ(format_figure(1.23456, 3), "1.235");
    EXPECT_EQ(format_figure(0.0004321, 3), "0.000432");
    EXPECT_EQ(format_figure(0.0, 3), "0.000");
    EXPECT_EQ(format_figure(2.5, 0), "2");
}

}  // namespace
}  // namespace tp::bench
