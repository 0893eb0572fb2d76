// Latency: the histogram's percentiles are within 1% of the exact ones, and a run's samples
// follow the rule a user chose (`latency: all` records every delivered packet, `sample N` one
// in N at each sink, `off` none), never a dropped packet.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/metrics/latency_histogram.hpp"
#include "framework/metrics/prometheus_families.hpp"
#include "framework/runtime/idle_mode.hpp"

namespace tp {
namespace {

// The exact value of rank ceil(q x n), as LatencyHistogram defines its percentiles.
uint64_t exact_percentile(const std::vector<uint64_t>& sorted, double q) {
    const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * double(sorted.size()))));
    return sorted[rank - 1];
}

void expect_within_one_percent(const LatencyHistogram& h, std::vector<uint64_t> values) {
    std::sort(values.begin(), values.end());
    for (const double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
        const double want = double(exact_percentile(values, q));
        const double got = double(h.percentile(q));
        EXPECT_LE(std::abs(got - want), 0.01 * want) << "q " << q << ": " << got << " vs " << want;
    }
    EXPECT_EQ(h.max(), values.back());
    EXPECT_EQ(h.samples(), values.size());
}

TEST(LatencyHistogram, PercentilesOfRandomDataAreWithinOnePercentOfTheSortedReference) {
    std::mt19937_64 rng(42);
    // Durations over nine decades (log-uniform), and a bimodal mix like a fast path with a
    // slow tail.
    std::uniform_real_distribution<double> decades(0.0, 9.0);
    std::vector<uint64_t> spread;
    for (int i = 0; i < 200000; ++i) spread.push_back(static_cast<uint64_t>(std::pow(10.0, decades(rng))));
    std::lognormal_distribution<double> fast(std::log(3000.0), 0.3), slow(std::log(3e6), 0.8);
    std::bernoulli_distribution tail(0.02);
    std::vector<uint64_t> bimodal;
    for (int i = 0; i < 200000; ++i) bimodal.push_back(static_cast<uint64_t>(tail(rng) ? slow(rng) : fast(rng)));
    for (const auto* values : {&spread, &bimodal}) {
        LatencyHistogram h;
        for (uint64_t v : *values) h.record(v);
        expect_within_one_percent(h, *values);
    }
}

TEST(LatencyHistogram, MergingPerTileHistogramsEqualsOneHistogramOfEverything) {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<uint64_t> any(0, uint64_t(1) << 40);
    LatencyHistogram a, b, merged;
    std::vector<uint64_t> all;
    uint64_t sum = 0;
    for (int i = 0; i < 50000; ++i) {
        const uint64_t v = any(rng);
        (i % 3 == 0 ? a : b).record(v);
        all.push_back(v);
        sum += v;
    }
    merged.merge(a);
    merged.merge(b);
    expect_within_one_percent(merged, all);
    EXPECT_DOUBLE_EQ(merged.mean(), double(sum) / double(all.size()));
    for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i) ASSERT_EQ(merged.count(i), a.count(i) + b.count(i));
}

TEST(LatencyHistogram, SmallValuesAreExactAndBucketsTileTheRange) {
    LatencyHistogram h;
    for (uint64_t v = 0; v < 256; ++v) h.record(v);
    for (uint64_t v = 1; v <= 256; ++v) EXPECT_EQ(h.percentile(double(v) / 256.0), v - 1);
    // Every bucket starts where the previous one ends, up to the top of uint64_t.
    for (size_t i = 1; i < LatencyHistogram::kBuckets; ++i)
        ASSERT_EQ(LatencyHistogram::lower(i), LatencyHistogram::lower(i - 1) + LatencyHistogram::width(i - 1)) << i;
    EXPECT_EQ(LatencyHistogram::bucket_of(~uint64_t(0)), LatencyHistogram::kBuckets - 1);
    EXPECT_EQ(LatencyHistogram().percentile(0.5), 0u);
}

RunReport run_latency_yaml(const std::string& yaml) {
    AppConfig app = parse_app_config(yaml, "test.yaml");
    AppRunner runner(app);
    return runner.run();
}

// Prometheus' `le` is "at most": a sample is never counted below its value, and a bucket ending
// exactly on a bound counts under it.
TEST(LatencyHistogram, PrometheusBucketsFoldEachLogLinearBucketUnderTheFirstBoundAtOrAboveItsEnd) {
    const std::vector<LatencyBucket> buckets = {{0.3, 1}, {0.7, 2}, {1.0, 3}, {1.0078125, 4}, {150e3, 5}};
    const auto folded = fold_latency(buckets);
    ASSERT_EQ(folded.size(), kLatencyBounds.size() + 1);
    const auto at = [&](double le) {
        for (const auto& b : folded)
            if (b.upper_bound == le) return b.cumulative_count;
        return uint64_t(~0ull);
    };
    EXPECT_EQ(at(0.5e-6), 1u);
    EXPECT_EQ(at(1e-6), 6u) << "0.7 us and 1 us: le 1 us";
    EXPECT_EQ(at(2e-6), 10u) << "just above 1 us: le 2 us";
    EXPECT_EQ(at(100e-3), 10u);
    EXPECT_EQ(folded.back().cumulative_count, 15u) << "150 ms: only +Inf";
    EXPECT_TRUE(std::isinf(folded.back().upper_bound));
}

TEST(Latency, AllRecordsEveryDeliveredPacketAndEveryNodesQueueWait) {
    const RunReport r = run_latency_yaml(
        "latency: all\nruntime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100000 }\n  - pass\n  - drop\n");
    EXPECT_EQ(r.delivered, 100000u);
    EXPECT_EQ(r.latency.end_to_end.samples, r.delivered);
    EXPECT_GT(r.latency.end_to_end.p50, 0.0);
    EXPECT_LE(r.latency.end_to_end.p50, r.latency.end_to_end.p99);
    EXPECT_LE(r.latency.end_to_end.p99, r.latency.end_to_end.max);
    ASSERT_EQ(r.latency.nodes.size(), 3u);
    for (const auto& n : r.latency.nodes) EXPECT_EQ(n.process.samples, 100000u) << n.node;
    // The nodes after the source waited in their input channel, every packet of them.
    EXPECT_EQ(r.latency.nodes[1].queue_wait.samples, 100000u);
    EXPECT_EQ(r.latency.nodes[2].queue_wait.samples, 100000u);
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["latency_us"]["samples"], r.delivered);
    EXPECT_EQ(j["latency_us"]["mode"], "all");
    uint64_t in_buckets = 0;
    for (const auto& b : j["latency_us"]["buckets"]) in_buckets += b[1].get<uint64_t>();
    EXPECT_EQ(in_buckets, r.delivered);
    for (const auto& t : j["tiles"]) EXPECT_TRUE(t.contains("queue_wait_us") && t["queue_wait_us"].contains("p99")) << t;
}

TEST(Latency, ALiveReadSeesSamplesGrowWhileTheTilesRecord) {
    // What a live view (telemetry) does: merge the sinks' histograms while the tiles write them.
    AppConfig app = parse_app_config(
        "latency: all\nruntime: { fuse: never }\npipeline:\n  - { stage: synth, count: 300000 }\n  - pass\n  - drop\n",
        "t.yaml");
    AppRunner runner(app);
    std::atomic<bool> done{false};
    uint64_t last = 0, reads = 0;
    bool monotonic = true;
    std::thread reader([&] {
        while (!done.load(std::memory_order_acquire)) {
            const uint64_t n = runner.latency().samples();
            monotonic &= n >= last;
            last = n;
            ++reads;
        }
    });
    const RunReport r = runner.run();
    done.store(true, std::memory_order_release);
    reader.join();
    EXPECT_TRUE(monotonic);
    EXPECT_GT(reads, 0u);
    EXPECT_LE(last, r.delivered);
    EXPECT_EQ(runner.latency().samples(), r.delivered);
}

TEST(Latency, SampleNRecordsOnePacketInNAtTheSink) {
    const RunReport r = run_latency_yaml("latency: sample 64\npipeline:\n  - { stage: synth, count: 100000 }\n  - parse\n  - drop\n");
    EXPECT_EQ(r.delivered, 100000u);
    EXPECT_EQ(r.latency.end_to_end.samples, 100000u / 64);
    EXPECT_TRUE(r.latency.nodes.empty());  // residence only with `all`
}

TEST(Latency, TheSinksOfAFarmTogetherHoldOneSampleInNOfWhatTheSourceEmitted) {
    // No collector: every worker ends in its own sink. The source picks the samples, so the
    // sinks' shares add up to the source's one in N however the packets were spread.
    const RunReport r = run_latency_yaml(
        "latency: sample 10\npipeline:\n  - { stage: synth, count: 100005 }\n"
        "  - farm:\n      workers: 3\n      collect: none\n      worker: [pass, drop]\n");
    EXPECT_EQ(r.delivered, 100005u);
    EXPECT_EQ(r.latency.end_to_end.samples, 10000u);
}

TEST(Latency, DroppedPacketsAreNeverSamples) {
    // `sample` drops every other packet under a counted reason; only the rest reach the sink.
    const RunReport r = run_latency_yaml(
        "latency: all\npipeline:\n  - { stage: synth, count: 100000 }\n  - { stage: sample, every: 2 }\n  - drop\n");
    EXPECT_EQ(r.drops, 50000u);
    EXPECT_EQ(r.delivered, 50000u);
    EXPECT_EQ(r.latency.end_to_end.samples, r.delivered);
    EXPECT_EQ(r.unaccounted, 0);
}

TEST(Latency, PacketsASinkDropsAreNotSamples) {
    // /dev/full takes the open and refuses every write: the sink drops each packet as
    // write_error (and fails when it closes).
    const RunReport r = run_latency_yaml(
        "latency: all\npipeline:\n  - { stage: synth, count: 5000 }\n  - { stage: pcap_out, file: /dev/full }\n");
    EXPECT_EQ(r.delivered, 0u);
    EXPECT_GT(r.stages.back().drop_reasons.at("write_error"), 0u);
    EXPECT_EQ(r.latency.end_to_end.samples, 0u);
}

TEST(Latency, OffRecordsNothing) {
    const RunReport r = run_latency_yaml("latency: off\npipeline:\n  - { stage: synth, count: 10000 }\n  - drop\n");
    EXPECT_EQ(r.delivered, 10000u);
    EXPECT_EQ(r.latency.end_to_end.samples, 0u);
    EXPECT_EQ(to_json(r)["latency_us"]["mode"], "off");
    EXPECT_EQ(format_table(r).find("latency"), std::string::npos);
}

TEST(Latency, TheDefaultSamplesOneIn64) {
    const AppConfig app = parse_app_config("pipeline:\n  - synth\n  - drop\n", "t.yaml");
    EXPECT_EQ(app.latency.str(), "sample 64");
}

TEST(Latency, ValuesThatDoNotParseAreLocatedAndNamed) {
    for (const char* bad : {"sample 0", "sample", "sample -3", "sample 64x", "fast", "sample 2000000"}) {
        try {
            parse_app_config(std::string("latency: ") + bad + "\npipeline:\n  - synth\n  - drop\n", "t.yaml");
            ADD_FAILURE() << bad << " accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(std::string(e.what()).rfind("t.yaml:1:10: latency must be off, all or sample N", 0), 0u) << e.what();
            EXPECT_NE(std::string(e.what()).find(std::string("got '") + bad + "'"), std::string::npos) << e.what();
        }
    }
    AppConfig app = parse_app_config("pipeline:\n  - synth\n  - drop\n", "t.yaml");
    EXPECT_THROW(set_latency(app, "sometimes"), LocatedError);
    set_latency(app, "sample 8");
    EXPECT_EQ(app.latency.every, 8u);
}

TEST(IdleMode, EachModeIsTheBackOffItDocuments) {
    const IdleBackoff spin = idle_backoff("spin", false);
    EXPECT_EQ(spin.yield_rounds, 0u);
    EXPECT_EQ(spin.spin_rounds, std::numeric_limits<uint32_t>::max());
    const IdleBackoff park = idle_backoff("park", false);
    EXPECT_EQ(park.spin_rounds + park.yield_rounds, 0u);
    EXPECT_GT(idle_backoff("auto", false).spin_rounds, 0u);
    EXPECT_EQ(idle_backoff("auto", true).spin_rounds, 0u);  // shared CPUs: never spin
    EXPECT_GT(idle_backoff("auto", true).yield_rounds, 0u);
}

TEST(IdleMode, EveryModeRunsAPacedAppToTheEndWithEveryPacketAccounted) {
    for (const char* mode : {"auto", "spin", "park"}) {
        const RunReport r = run_latency_yaml(std::string("runtime: { idle: ") + mode +
                                     " }\npipeline:\n  - { stage: synth, count: 20000, pps: 400000 }\n  - parse\n  - drop\n");
        EXPECT_EQ(r.delivered, 20000u) << mode;
        EXPECT_EQ(r.unaccounted, 0) << mode;
        EXPECT_TRUE(r.pools_full()) << mode;
    }
    try {
        parse_app_config("runtime: { idle: nap }\npipeline:\n  - synth\n  - drop\n", "t.yaml");
        ADD_FAILURE() << "idle: nap accepted";
    } catch (const LocatedError& e) {
        EXPECT_STREQ(e.what(), "t.yaml:1:18: unknown runtime.idle 'nap' (known: auto, spin, park)");
    }
}

}  // namespace
}  // namespace tp
