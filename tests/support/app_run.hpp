// Test support: an app run from YAML text (as if read from "test.yaml"), and the promise every
// run keeps: each packet a source emitted (and each copy a tee made) left through a sink or a
// counted drop, and every pool is full again.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"

namespace tp::test {

inline RunReport run_yaml(const std::string& yaml, const RunOptions& opts = {}) {
    AppConfig app = parse_app_config(yaml, "test.yaml");
    AppRunner runner(app);
    return runner.run(opts);
}

inline void expect_accounted(const RunReport& r) {
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_EQ(r.packets + r.copies, r.delivered + r.drops);
    EXPECT_TRUE(r.pools_full());
    for (const auto& p : r.pools) EXPECT_EQ(p.available, p.capacity) << p.name;
}

}  // namespace tp::test
