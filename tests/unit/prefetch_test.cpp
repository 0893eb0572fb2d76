// runtime.prefetch: which tiles prefetch the mbufs of the bursts they take (only where a stage
// reads the packets, never a source's), and an app with `burst` runs to the end with every
// packet accounted in the shapes whose bursts carry holes and reordered packets.
#include <gtest/gtest.h>

#include <string>

#include "framework/config/app_config.hpp"
#include "framework/config/location.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/graph/app_runner.hpp"
#include "tests/support/app_run.hpp"

namespace tp {
namespace {

const GraphNode& node_named(const AppGraph& g, const std::string& name) {
    for (const GraphNode& n : g.nodes)
        if (n.name == name) return n;
    throw std::invalid_argument("no node " + name);
}

TEST(Prefetch, OnlyTilesWhoseStagesReadThePacketsPrefetchTheBurstsTheyTake) {
    const std::string pipeline =
        "pipeline:\n  - synth\n  - pass\n  - parse\n"
        "  - farm: { name: f, workers: 2, collect: ordered, worker: [pass, parse] }\n  - drop\n";
    AppConfig app = parse_app_config("runtime: { prefetch: burst, fuse: never }\n" + pipeline, "t.yaml");
    EXPECT_EQ(app.prefetch, "burst");
    const AppGraph g = build_graph(app);
    EXPECT_FALSE(prefetches_bursts(app, node_named(g, "synth")));  // makes its packets, takes none
    EXPECT_FALSE(prefetches_bursts(app, node_named(g, "pass")));    // moves descriptors only
    EXPECT_TRUE(prefetches_bursts(app, node_named(g, "parse")));
    EXPECT_TRUE(prefetches_bursts(app, node_named(g, "f.0")));      // pass then parse: one reads
    EXPECT_FALSE(prefetches_bursts(app, node_named(g, "f.emitter")));
    EXPECT_FALSE(prefetches_bursts(app, node_named(g, "drop")));    // frees simple mbufs unread

    AppConfig off = parse_app_config("runtime: { fuse: never }\n" + pipeline, "t.yaml");
    EXPECT_EQ(off.prefetch, "none");  // the default
    const AppGraph g_off = build_graph(off);
    for (const GraphNode& n : g_off.nodes) EXPECT_FALSE(prefetches_bursts(off, n)) << n.name;
}

TEST(Prefetch, AnUnknownModeIsRefusedWhereItWasGiven) {
    try {
        parse_app_config("runtime: { prefetch: all }\npipeline:\n  - synth\n  - drop\n", "t.yaml");
        ADD_FAILURE() << "prefetch: all accepted";
    } catch (const LocatedError& e) {
        EXPECT_STREQ(e.what(), "t.yaml:1:22: unknown runtime.prefetch 'all' (known: none, burst)");
    }
}

// An ordered farm whose workers drop some packets hands its collector holes (descriptors
// without an mbuf) between reordered packets: the prefetch passes over them.
TEST(Prefetch, AppsThatPrefetchBurstsRunToTheEndWithEveryPacketAccounted) {
    const char* apps[] = {
        "pipeline:\n  - { stage: synth, count: 50000 }\n  - parse\n  - drop\n",
        "pipeline:\n  - { stage: synth, count: 50000, flows: 64 }\n  - parse\n"
        "  - farm: { workers: 3, collect: ordered, worker: [{ stage: sample, every: 3 }, parse] }\n  - parse\n  - drop\n",
        "pipeline:\n  - { stage: synth, count: 50000, flows: 64 }\n  - parse\n"
        "  - farm: { workers: 3, dispatch: flow_hash, worker: { pipeline: [parse, pass] } }\n  - drop\n",
    };
    for (const char* fuse : {"never", "always"})
        for (const char* yaml : apps) {
            SCOPED_TRACE(std::string(fuse) + "\n" + yaml);
            const RunReport r = test::run_yaml(std::string("runtime: { prefetch: burst, fuse: ") + fuse + " }\n" + yaml);
            EXPECT_EQ(r.packets, 50000u);
            test::expect_accounted(r);
        }
}

}  // namespace
}  // namespace tp
