// Map pattern pieces: the multicast topology (tree and linear) reaches every worker exactly
// once for W = 1..64, with one input per worker and at most two children; references
// multicast over real channels of every transport arrive at every worker once and in order,
// with more threads than CPUs; the map collector completes each task exactly once when
// partials interleave; and a small matrix-vector map equals the sequential product.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/patterns/map_collector.hpp"
#include "framework/patterns/partition.hpp"
#include "framework/patterns/tree_multicast.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp {
namespace {

constexpr uint32_t kMaxWorkers = 64;

// Workers reached from the emitter, each counted every time a reference reaches it.
std::vector<uint32_t> visits(uint32_t workers, Multicast mode) {
    std::vector<uint32_t> seen(workers, 0);
    std::vector<uint32_t> frontier;
    if (mode == Multicast::linear) {
        for (uint32_t j = 0; j < workers; ++j) frontier.push_back(j);
    } else {
        frontier.push_back(0);
    }
    while (!frontier.empty()) {
        const uint32_t j = frontier.back();
        frontier.pop_back();
        ++seen[j];
        for (uint32_t c : children_of(j, workers, mode)) frontier.push_back(c);
    }
    return seen;
}

TEST(TreeMulticastTopology, TreeReachesEveryWorkerExactlyOnceForEveryWorkerCountUpTo64) {
    for (uint32_t w = 1; w <= kMaxWorkers; ++w) {
        const auto seen = visits(w, Multicast::tree);
        for (uint32_t j = 0; j < w; ++j) EXPECT_EQ(seen[j], 1u) << "W=" << w << " worker " << j;
    }
}

TEST(TreeMulticastTopology, LinearReachesEveryWorkerExactlyOnceFromTheEmitter) {
    for (uint32_t w = 1; w <= kMaxWorkers; ++w) {
        const auto seen = visits(w, Multicast::linear);
        for (uint32_t j = 0; j < w; ++j) {
            EXPECT_EQ(seen[j], 1u) << "W=" << w << " worker " << j;
            EXPECT_EQ(children_of(j, w, Multicast::linear).count, 0u);
            EXPECT_EQ(parent_of(j, w, Multicast::linear), kFromEmitter);
            EXPECT_EQ(depth_of(j, w, Multicast::linear), 0u);
        }
        EXPECT_EQ(multicast_hops(w, Multicast::linear), 1u);
    }
}

TEST(TreeMulticastTopology, EachWorkerHasOneInputAndAtMostTwoChildrenFollowingTheLevelRule) {
    for (uint32_t w = 1; w <= kMaxWorkers; ++w) {
        std::vector<uint32_t> inputs(w, 0);
        inputs[0] = 1;  // the root's input is the emitter
        EXPECT_EQ(parent_of(0, w), kFromEmitter);
        EXPECT_EQ(level_of(0, w), tree_levels(w));
        for (uint32_t j = 0; j < w; ++j) {
            const TreeChildren c = children_of(j, w);
            ASSERT_LE(c.count, 2u);  // plus the collector: at most three outputs
            const uint32_t level = level_of(j, w);
            for (uint32_t k = 0; k < c.count; ++k) {
                const uint32_t child = c.id[k];
                ASSERT_LT(child, w);
                ++inputs[child];
                EXPECT_EQ(parent_of(child, w), j) << "W=" << w;
                EXPECT_EQ(level_of(child, w), level - 1);
                EXPECT_EQ(depth_of(child, w), depth_of(j, w) + 1);
                // worker j at level i forwards to j + 1 and j + 2^(i-1)
                EXPECT_TRUE(child == j + 1 || child == j + (1u << (level - 1))) << "W=" << w << " j=" << j;
            }
            if (c.count == 2) {
                EXPECT_LT(c.id[0], c.id[1]);
            }
        }
        for (uint32_t j = 0; j < w; ++j) EXPECT_EQ(inputs[j], 1u) << "W=" << w << " worker " << j;
    }
}

TEST(TreeMulticastTopology, DepthIsTheBitWidthOfTheWorkerCount) {
    for (uint32_t w = 1; w <= kMaxWorkers; ++w) {
        uint32_t levels = 0;  // ceil(log2(W + 1))
        while ((1u << levels) < w + 1) ++levels;
        EXPECT_EQ(tree_levels(w), levels);
        EXPECT_EQ(multicast_hops(w, Multicast::tree), levels);
        uint32_t deepest = 0;
        for (uint32_t j = 0; j < w; ++j) deepest = std::max(deepest, depth_of(j, w));
        EXPECT_EQ(deepest + 1, levels) << "W=" << w;  // emitter -> root is the first hop
    }
}

TEST(TreeMulticastTopology, TenWorkersFormTheTreeDrawnInTheHeader) {
    auto kids = [](uint32_t j) {
        const TreeChildren c = children_of(j, 10);
        return std::vector<uint32_t>(c.begin(), c.end());
    };
    EXPECT_EQ(kids(0), (std::vector<uint32_t>{1, 8}));
    EXPECT_EQ(kids(1), (std::vector<uint32_t>{2, 5}));
    EXPECT_EQ(kids(2), (std::vector<uint32_t>{3, 4}));
    EXPECT_EQ(kids(5), (std::vector<uint32_t>{6, 7}));
    EXPECT_EQ(kids(8), (std::vector<uint32_t>{9}));
    for (uint32_t leaf : {3u, 4u, 6u, 7u, 9u}) EXPECT_TRUE(kids(leaf).empty()) << leaf;
}

TEST(TreeMulticastTopology, ParsesModeNames) {
    EXPECT_EQ(parse_multicast("tree"), Multicast::tree);
    EXPECT_EQ(parse_multicast("linear"), Multicast::linear);
    EXPECT_STREQ(multicast_name(Multicast::tree), "tree");
    try {
        parse_multicast("star");
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("unknown multicast 'star' (known: linear, tree)"), std::string::npos);
    }
}

TEST(MapPartition, BlocksCoverTheItemsInOrderWithSizesDifferingByAtMostOne) {
    for (uint32_t w = 1; w <= kMaxWorkers; ++w)
        for (uint32_t n : {0u, 1u, 7u, 56u, 112u, 168u}) {
            uint32_t next = 0, lo = n, hi = 0;
            for (uint32_t k = 0; k < w; ++k) {
                const Block b = block_of(k, w, n);
                EXPECT_EQ(b.begin, next);
                next = b.end();
                lo = std::min(lo, b.count);
                hi = std::max(hi, b.count);
            }
            EXPECT_EQ(next, n);
            EXPECT_LE(hi - lo, 1u);
        }
}

// The threads of one map: an emitter multicasting references 0..tasks-1 with at most `window`
// tasks incomplete, W workers (receive, forward, work(w, ref), send a partial) and a collector
// calling done(ref) for every completed task. Each waits through the default WaitPolicy with
// doorbells, so the run progresses with more threads than CPUs. With burst > 1 the emitter
// and the workers move references in bursts of up to that many.
struct MapRun {
    std::string transport;
    Multicast mode = Multicast::tree;
    uint32_t workers = 1;
    uint64_t tasks = 0;
    uint32_t capacity = 8;
    uint32_t window = 8;
    uint32_t burst = 1;

    template <typename Work, typename Done>
    void operator()(Work&& work, Done&& done) const {
        const ChannelSpec spec{transport, capacity, -1};
        MulticastNetwork net(spec, workers, mode);
        AsymmetricReceiver<uint64_t> partials(spec, workers);
        std::vector<Doorbell> bells(workers + 2);  // emitter, workers, collector
        std::vector<Doorbell*> worker_bells;
        for (uint32_t w = 0; w < workers; ++w) worker_bells.push_back(&bells[1 + w]);
        net.set_doorbells(&bells[0], worker_bells);
        partials.set_receiver_bell(&bells[workers + 1]);
        for (uint32_t w = 0; w < workers; ++w) partials.sender(w).set_bells(worker_bells[w], &bells[workers + 1]);

        const WaitPolicy policy;
        std::atomic<uint64_t> completed{0};
        std::vector<std::thread> threads;
        threads.emplace_back([&] {
            MulticastPort port = net.emitter_port();
            std::vector<uint64_t> refs;
            for (uint64_t t = 0; t < tasks;) {
                uint64_t free_until = 0;  // tasks below this have a free place in the window
                policy.wait([&] { return (free_until = completed.load(std::memory_order_acquire) + window) > t; },
                            [&](auto& attempt) { return park_on(&bells[0], policy, attempt); });
                if (burst == 1) {
                    port.forward(t++, policy);
                    continue;
                }
                refs.clear();
                while (t < std::min(free_until, tasks) && refs.size() < burst) refs.push_back(t++);
                port.forward_burst(refs.data(), static_cast<uint32_t>(refs.size()), policy);
            }
            port.close();
        });
        for (uint32_t w = 0; w < workers; ++w)
            threads.emplace_back([&, w] {
                MulticastPort port = net.worker_port(w);
                Channel<uint64_t>& out = partials.sender(w);
                std::vector<uint64_t> refs(burst);
                uint32_t n;
                while ((n = burst == 1 ? port.recv_and_forward(refs[0], policy)
                                       : port.recv_and_forward_burst(refs.data(), burst, policy)) != 0)
                    for (uint32_t i = 0; i < n; ++i) {
                        work(w, refs[i]);
                        send(out, refs[i], policy);
                    }
                out.close();
            });
        threads.emplace_back([&] {
            MapCollector collector(partials, window);
            uint64_t task;
            while (collector.next(task, policy)) {
                done(task);
                completed.store(collector.completed(), std::memory_order_release);
                bells[0].ring();
            }
        });
        for (auto& t : threads) t.join();
    }
};

class MulticastOverTransport : public testing::TestWithParam<std::string> {};

TEST_P(MulticastOverTransport, EveryWorkerSeesEveryTaskOnceInOrderWithMoreThreadsThanCpus) {
    const uint64_t tasks = 1500;
    // A udn_eventdev channel owns one of the process's 16 event devices; a run needs 2W channels.
    const uint32_t most_workers = GetParam() == "udn_eventdev" ? 8 : 13;
    for (Multicast mode : {Multicast::tree, Multicast::linear})
        for (uint32_t workers : {1u, 3u, 8u, 13u})
            for (uint32_t burst : {1u, 5u}) {
                if (workers > most_workers) continue;
            std::vector<std::vector<uint64_t>> seen(workers);
            for (auto& s : seen) s.reserve(tasks);
            std::vector<uint64_t> completions;
            completions.reserve(tasks);
            MapRun{GetParam(), mode, workers, tasks, 4, 8, burst}(
                [&](uint32_t w, uint64_t ref) { seen[w].push_back(ref); },
                [&](uint64_t task) { completions.push_back(task); });
            const std::string what = std::string(multicast_name(mode)) + " W=" + std::to_string(workers) +
                                     " burst " + std::to_string(burst);
            for (uint32_t w = 0; w < workers; ++w) {
                ASSERT_EQ(seen[w].size(), tasks) << what << " worker " << w;
                for (uint64_t t = 0; t < tasks; ++t) ASSERT_EQ(seen[w][t], t) << what << " worker " << w;
            }
            ASSERT_EQ(completions.size(), tasks) << what;
            for (uint64_t t = 0; t < tasks; ++t) ASSERT_EQ(completions[t], t) << what;  // workers in order
        }
}

INSTANTIATE_TEST_SUITE_P(Transports, MulticastOverTransport, testing::ValuesIn(transport_names()),
                         [](const auto& info) { return info.param; });

TEST(MapCollector, CompletesEachTaskExactlyOnceWhenPartialsInterleave) {
    AsymmetricReceiver<uint64_t> partials(ChannelSpec{"ring", 16, -1}, 3);
    MapCollector collector(partials, 4);
    // Worker 0 runs three tasks ahead, worker 2 lags: tasks complete as their last partial lands.
    for (uint64_t t : {0, 1, 2, 3}) ASSERT_TRUE(partials.sender(0).try_send(t));
    for (uint64_t t : {0, 1}) ASSERT_TRUE(partials.sender(1).try_send(t));
    std::vector<uint64_t> done;
    uint64_t task;
    for (int i = 0; i < 16; ++i)
        if (collector.try_collect(task)) done.push_back(task);
    EXPECT_TRUE(done.empty());
    EXPECT_EQ(collector.incomplete(), 4u);

    ASSERT_TRUE(partials.sender(2).try_send(0));
    ASSERT_TRUE(partials.sender(2).try_send(1));
    for (uint64_t t : {2, 3}) ASSERT_TRUE(partials.sender(1).try_send(t));
    ASSERT_TRUE(partials.sender(2).try_send(2));
    for (int i = 0; i < 16; ++i)
        if (collector.try_collect(task)) done.push_back(task);
    EXPECT_EQ(done, (std::vector<uint64_t>{0, 1, 2}));
    EXPECT_EQ(collector.incomplete(), 1u);

    ASSERT_TRUE(partials.sender(2).try_send(3));
    for (uint32_t w = 0; w < 3; ++w) partials.sender(w).close();
    while (collector.next(task)) done.push_back(task);
    EXPECT_EQ(done, (std::vector<uint64_t>{0, 1, 2, 3}));
    EXPECT_EQ(collector.completed(), 4u);
    EXPECT_EQ(collector.incomplete(), 0u);
}

TEST(MapCollector, RefusesATaskThatWouldOverrunTheWindow) {
    AsymmetricReceiver<uint64_t> partials(ChannelSpec{"ring", 16, -1}, 2);
    MapCollector collector(partials, 2);
    ASSERT_TRUE(partials.sender(0).try_send(0));
    ASSERT_TRUE(partials.sender(0).try_send(2));  // same ring entry as task 0, still incomplete
    uint64_t task;
    EXPECT_THROW(collector.try_collect(task), std::logic_error);
}

TEST(MapCollector, ReportsEndOfStreamWithAnIncompleteTask) {
    AsymmetricReceiver<uint64_t> partials(ChannelSpec{"ring", 16, -1}, 2);
    MapCollector collector(partials, 4);
    ASSERT_TRUE(partials.sender(0).try_send(7));
    partials.sender(0).close();
    partials.sender(1).close();
    uint64_t task;
    EXPECT_THROW(collector.next(task), std::logic_error);
}

// A stream of M x M matrices times one vector b: worker w computes its block of rows of
// task t's product; the collector compares the whole vector with the sequential product.
template <typename T>
void expect_map_equals_sequential(const std::string& transport, Multicast mode, uint32_t workers) {
    const uint32_t m = 37, window = 8;  // m not a multiple of W: uneven blocks
    const uint64_t tasks = 200;
    std::vector<T> b(m);
    for (uint32_t k = 0; k < m; ++k) b[k] = static_cast<T>(static_cast<int>(k % 7) - 3);
    auto element = [&](uint64_t t, uint32_t r, uint32_t k) {  // matrix t, small exact values
        return static_cast<T>(static_cast<int>((t * 31 + r * 7 + k * 3) % 17) - 8) / static_cast<T>(2);
    };
    std::vector<std::vector<T>> matrices(tasks, std::vector<T>(m * m));
    std::vector<std::vector<T>> expected(tasks, std::vector<T>(m));
    for (uint64_t t = 0; t < tasks; ++t)
        for (uint32_t r = 0; r < m; ++r) {
            T acc = 0;
            for (uint32_t k = 0; k < m; ++k) {
                matrices[t][r * m + k] = element(t, r, k);
                acc += matrices[t][r * m + k] * b[k];
            }
            expected[t][r] = acc;
        }
    std::vector<std::vector<T>> results(window, std::vector<T>(m));  // one per in-flight task
    uint64_t mismatches = 0, checked = 0;
    MapRun{transport, mode, workers, tasks, 4, window}(
        [&](uint32_t w, uint64_t t) {
            const Block rows = block_of(w, workers, m);
            T* out = results[t % window].data();
            for (uint32_t r = rows.begin; r < rows.end(); ++r) {
                T acc = 0;
                for (uint32_t k = 0; k < m; ++k) acc += matrices[t][r * m + k] * b[k];
                out[r] = acc;
            }
        },
        [&](uint64_t t) {
            std::vector<T>& got = results[t % window];
            mismatches += got != expected[t];
            std::fill(got.begin(), got.end(), static_cast<T>(-12345));  // a missed row shows next time
            ++checked;
        });
    EXPECT_EQ(checked, tasks);
    EXPECT_EQ(mismatches, 0u) << transport << " " << multicast_name(mode) << " W=" << workers;
}

TEST(MapVec, IntegerMapEqualsTheSequentialProduct) {
    for (const std::string transport : {"sm", "ring", "lock"})
        for (uint32_t workers : {1u, 4u, 7u}) {
            expect_map_equals_sequential<int32_t>(transport, Multicast::tree, workers);
            expect_map_equals_sequential<int32_t>(transport, Multicast::linear, workers);
        }
}

TEST(MapVec, FloatMapEqualsTheSequentialProduct) {
    for (const std::string transport : {"sm", "ring", "lock"})
        for (uint32_t workers : {1u, 4u, 7u}) {
            expect_map_equals_sequential<float>(transport, Multicast::tree, workers);
            expect_map_equals_sequential<float>(transport, Multicast::linear, workers);
        }
}

}  // namespace
}  // namespace tp
