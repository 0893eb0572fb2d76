// Farms and maps as users compose them: every packet is delivered exactly once under every
// dispatch policy and transport, order is restored where asked (even when workers drop
// packets), one flow stays on one worker under flow_hash, emitter-less, collector-less and
// pipeline-worker farms run, and a map's output equals the sequential output for every worker
// count and multicast — all with more threads than CPUs.
#include <gtest/gtest.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <tuple>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/config/app_config.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/stage/registry.hpp"
#include "tests/support/order_check.hpp"

namespace tp {
namespace {

using test::packet_index;
test::OrderCheckCounts& counts = test::order_check_counts();

// Drops every packet whose index is 3 mod 7: workers that lose packets.
class DropSome final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit DropSome(const ParamValues&) : Stage(kKind), why_(declare_drop("test")) {}
    void process(Burst& b) override {
        uint16_t k = 0;
        for (const PacketDesc& d : b) {
            if (packet_index(d) % 7 == 3) drop(d, why_);
            else b.d[k++] = d;
        }
        b.n = k;
    }

private:
    uint16_t why_;
};
TILEPIPE_STAGE(DropSome, "test_drop_some", "test: drop packets whose index is 3 mod 7");

RunReport run_farm_yaml(const std::string& yaml) {
    AppRunner runner(parse_app_config(yaml, "farm.yaml"));
    return runner.run();
}

void expect_accounted(const RunReport& r, uint64_t packets) {
    EXPECT_EQ(r.packets, packets);
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_TRUE(r.pools_full());
}

uint64_t stage_in(const RunReport& r, const std::string& name) {
    for (const auto& s : r.stages)
        if (s.name == name) return s.in;
    ADD_FAILURE() << "no stage " << name;
    return 0;
}

std::string farm_yaml(const std::string& farm, const std::string& sink = "drop", uint64_t count = 40000,
                      const std::string& extra = "") {
    return extra + "pipeline:\n  - stage: synth\n    count: " + std::to_string(count) +
           "\n    flows: 65536\n  - parse\n  - farm:\n" + farm + "  - " + sink + "\n";
}

// Each farm test runs with the emitter and collector on tiles of their own and folded into
// their neighbours (what apps with more tiles than CPUs get).
const char* const kFuse[] = {"never", "always"};

TEST(Farm, EveryDispatchPolicyDeliversEveryPacketExactlyOnceOnEveryTransport) {
    for (const std::string& transport : transport_names()) {
        for (const char* dispatch : {"round_robin", "on_demand", "flow_hash"}) {
            for (const char* fuse : kFuse) {
                SCOPED_TRACE(transport + " " + dispatch + " fuse " + fuse);
                const RunReport r = run_farm_yaml(farm_yaml(std::string("      workers: 4\n      dispatch: ") + dispatch +
                                                           "\n      worker: [pass]\n",
                                                       "drop", 20000,
                                                       "transport: " + transport + "\nruntime: { threads: per_tile, fuse: " +
                                                           fuse + " }\n"));
                expect_accounted(r, 20000);
                EXPECT_EQ(r.delivered, 20000u);
                uint64_t sum = 0;
                for (int w = 0; w < 4; ++w) sum += stage_in(r, "farm." + std::to_string(w) + "/pass");
                EXPECT_EQ(sum, 20000u);
            }
        }
    }
}

TEST(Farm, OrderedCollectionRestoresInputOrderEvenWhenWorkersDropOnEveryTransport) {
    for (const std::string& transport : transport_names()) {
        for (const char* dispatch : {"round_robin", "on_demand", "flow_hash"}) {
            for (const char* fuse : kFuse) {
                SCOPED_TRACE(transport + " " + dispatch + " fuse " + fuse);
                counts.reset();
                const uint64_t n = 20000;
                const RunReport r = run_farm_yaml(farm_yaml(std::string("      workers: 3\n      collect: ordered\n      dispatch: ") +
                                                           dispatch + "\n      worker: [test_drop_some, pass]\n",
                                                       "test_order_check", n,
                                                       "transport: " + transport + "\nqueue: 64\nruntime: { threads: per_tile, fuse: " +
                                                           fuse + " }\n"));
                expect_accounted(r, n);
                EXPECT_EQ(counts.out_of_order.load(), 0u);
                const uint64_t dropped = n / 7 + (n % 7 > 3 ? 1 : 0);
                EXPECT_EQ(counts.seen.load(), n - dropped);
                EXPECT_EQ(r.drops, dropped);
            }
        }
    }
}

// On demand, the workers that keep up run ahead of a stalled one, and the collector holds
// what they return in its reorder window (as many packets as the app's queues): the emitter
// numbers only so far ahead of what the collector released, or the window overflowed and the
// collector failed, dropping every packet.
TEST(Farm, AnOrderedFarmFedOnDemandRidesOutAStalledWorker) {
    for (const std::string transport : {"ring", "sm", "udn"}) {
        for (const char* fuse : kFuse) {
            SCOPED_TRACE(transport + " fuse " + fuse);
            counts.reset();
            const uint64_t n = 60000;
            const RunReport r = run_farm_yaml(farm_yaml("      name: fw\n      workers: 3\n      collect: ordered\n"
                                                   "      dispatch: on_demand\n      worker: [pass]\n",
                                                   "test_order_check", n,
                                                   "transport: " + transport + "\nqueue: 16\nruntime: { threads: per_tile, fuse: " +
                                                       fuse + " }\nchaos: { stall: fw.1, stall_ms: 100, after_packets: 200 }\n"));
            EXPECT_TRUE(r.failures.empty()) << r.failures.front().node << ": " << r.failures.front().error;
            expect_accounted(r, n);
            EXPECT_EQ(r.delivered, n);
            EXPECT_EQ(counts.out_of_order.load(), 0u);
            EXPECT_EQ(counts.seen.load(), n);
        }
    }
}

// Folded, one node collects the first ordered farm and dispatches (and numbers) for the next:
// it gives the first farm's credit back while it takes the second's.
TEST(Farm, TwoOrderedFarmsInARowShareANodeAndRunToTheEnd) {
    for (const char* second : {"round_robin", "on_demand"}) {
        for (const char* fuse : kFuse) {
            SCOPED_TRACE(std::string(second) + " fuse " + fuse);
            counts.reset();
            const uint64_t n = 60000;  // several windows; the order check's index wraps at 65536
            const RunReport r = run_farm_yaml(
                std::string("runtime: { fuse: ") + fuse + " }\npipeline:\n  - { stage: synth, count: " + std::to_string(n) +
                ", flows: 65536 }\n  - parse\n"
                "  - farm: { name: a, workers: 2, collect: ordered, dispatch: on_demand, worker: [pass] }\n"
                "  - farm: { name: b, workers: 2, collect: ordered, dispatch: " + second + ", worker: [pass] }\n"
                "  - test_order_check\n");
            EXPECT_TRUE(r.failures.empty()) << r.failures.front().node << ": " << r.failures.front().error;
            expect_accounted(r, n);
            EXPECT_EQ(counts.seen.load(), n);
            EXPECT_EQ(counts.out_of_order.load(), 0u);
        }
    }
}

TEST(Farm, OrderedPipelineWorkersPassDropsOfEarlierTilesOnToTheCollector) {
    // The first tile of each worker drops; the second must hand those holes on, or the
    // collector would wait for the numbers forever.
    for (const char* fuse : kFuse) {
        SCOPED_TRACE(std::string("fuse ") + fuse);
        counts.reset();
        const uint64_t n = 30000;
        const RunReport r = run_farm_yaml(farm_yaml("      workers: 2\n      collect: ordered\n      worker:\n"
                                               "        pipeline: [test_drop_some, pass, pass]\n",
                                               "test_order_check", n, std::string("runtime: { fuse: ") + fuse + " }\n"));
        expect_accounted(r, n);
        EXPECT_EQ(counts.out_of_order.load(), 0u);
        const uint64_t dropped = n / 7 + (n % 7 > 3 ? 1 : 0);
        EXPECT_EQ(counts.seen.load(), n - dropped);
    }
}

TEST(Farm, FlowHashKeepsEachFlowOnOneWorker) {
    const RunReport one = run_farm_yaml(
        "pipeline:\n  - stage: synth\n    count: 10000\n    flows: 1\n  - parse\n"
        "  - farm:\n      workers: 4\n      dispatch: flow_hash\n      worker: [pass]\n  - drop\n");
    int busy_workers = 0;
    for (int w = 0; w < 4; ++w) {
        const uint64_t in = stage_in(one, "farm." + std::to_string(w) + "/pass");
        EXPECT_TRUE(in == 0 || in == 10000) << in;
        busy_workers += in != 0;
    }
    EXPECT_EQ(busy_workers, 1);
    const RunReport many = run_farm_yaml(farm_yaml("      workers: 4\n      dispatch: flow_hash\n      worker: [pass]\n"));
    for (int w = 0; w < 4; ++w) EXPECT_GT(stage_in(many, "farm." + std::to_string(w) + "/pass"), 5000u);
}

TEST(Farm, EmitterlessCollectorlessAndPipelineWorkersCompose) {
    // The parse node dispatches itself; workers feed the drop sink directly.
    RunReport r = run_farm_yaml(farm_yaml("      name: rss\n      workers: 3\n      emitter: false\n      collect: none\n"
                                     "      dispatch: flow_hash\n      worker: [pass]\n"));
    expect_accounted(r, 40000);
    EXPECT_EQ(r.delivered, 40000u);
    // Each worker is a two-tile pipeline; a second farm follows the first.
    r = run_farm_yaml(
        "runtime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 30000\n  - parse\n"
        "  - farm:\n      workers: 2\n      worker:\n        pipeline: [pass, pass]\n"
        "  - farm:\n      workers: 3\n      dispatch: on_demand\n      worker: [pass]\n  - drop\n");
    expect_accounted(r, 30000);
    EXPECT_EQ(r.delivered, 30000u);
    EXPECT_EQ(stage_in(r, "farm.0.pass_2") + stage_in(r, "farm.1.pass_2"), 30000u);
}

TEST(Farm, WorkersEndingInSinksDeliverEverything) {
    const RunReport r = run_farm_yaml(
        "pipeline:\n  - stage: synth\n    count: 25000\n  - farm:\n      workers: 2\n      collect: none\n"
        "      worker: [pass, drop]\n");
    expect_accounted(r, 25000);
    EXPECT_EQ(r.delivered, 25000u);
}

TEST(Map, OutputEqualsTheSequentialOutputForEveryWorkerCountAndMulticast) {
    for (const char* multicast : {"linear", "tree"}) {
        for (uint32_t workers : {1u, 2u, 3u, 5u, 8u}) {
            SCOPED_TRACE(std::string(multicast) + " x" + std::to_string(workers));
            counts.reset();
            const RunReport r = run_farm_yaml(
                "runtime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 30000\n    flows: 65536\n"
                "  - parse\n  - map:\n      workers: " + std::to_string(workers) + "\n      multicast: " + multicast +
                "\n      worker: [test_drop_some, pass]\n  - test_order_check\n");
            expect_accounted(r, 30000);
            const uint64_t dropped = 30000 / 7 + (30000 % 7 > 3 ? 1 : 0);
            EXPECT_EQ(counts.seen.load(), 30000 - dropped);  // every survivor, once
            EXPECT_EQ(counts.out_of_order.load(), 0u);       // in the source's order
            uint64_t shared = 0;
            for (uint32_t w = 0; w < workers; ++w) shared += stage_in(r, "map." + std::to_string(w) + "/pass");
            EXPECT_EQ(shared, 30000 - dropped);
        }
    }
}

TEST(Map, RunsOverEveryTransport) {
    for (const std::string& transport : transport_names()) {
        SCOPED_TRACE(transport);
        const RunReport r = run_farm_yaml("transport: " + transport +
                                     "\npipeline:\n  - stage: synth\n    count: 20000\n  - map:\n      workers: 4\n"
                                     "      worker: [pass]\n  - drop\n");
        expect_accounted(r, 20000);
        EXPECT_EQ(r.delivered, 20000u);
    }
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

// A map's emitter and collector run no stage, but a failure there (an internal error) must
// still end the run cleanly: what they hold and what still reaches them is given back and
// counted, slots go back, and the end of stream reaches every output.
TEST(MapFailure, AFailedEmitterAndCollectorGiveBackWhatTheyHoldAndEndTheMap) {
    MbufPoolSpec spec;
    spec.name = "map_failure_pool";
    spec.mbufs = 255;
    MbufPool pool(spec);
    auto desc = [] { return make_desc_channel(ChannelSpec{"ring", 64}); };
    auto word = [] { return make_word_channel(ChannelSpec{"ring", 16}); };
    auto in = desc(), out = desc();
    auto to_w0 = word(), to_w1 = word(), freed = word(), from_w0 = word(), from_w1 = word();
    MapTaskSlots slots(4, 2);
    MapEmitterTask emitter(slots, {in.get()}, {to_w0.get(), to_w1.get()}, freed.get());
    MapCollectorTask collector(slots, {from_w0.get(), from_w1.get()}, out.get(), freed.get());

    auto feed = [&](uint16_t n) {
        rte_mbuf* m[kBurstMax];
        ASSERT_TRUE(alloc_packets(pool.get(), m, n));
        PacketDesc d[kBurstMax];
        for (uint16_t i = 0; i < n; ++i) d[i] = PacketDesc{m[i], 0, 64, 0, 0};
        ASSERT_EQ(in->try_send_burst(d, n), n);
    };
    // Two tasks of 10 packets go out to both workers before the emitter fails.
    feed(10);
    ASSERT_TRUE(emitter.poll());
    feed(10);
    ASSERT_TRUE(emitter.poll());
    emitter.record_failure("emitter broke");
    feed(5);
    in->close();
    for (int i = 0; i < 100 && !to_w1->closed(); ++i) emitter.poll_failed();
    EXPECT_EQ(emitter.failure_drops(), 5u) << "what arrived after the failure is given back";
    EXPECT_TRUE(to_w0->closed());
    EXPECT_TRUE(to_w1->closed());
    emitter.poll_failed();
    EXPECT_FALSE(emitter.done()) << "the emitter takes freed slots until the collector closes their link";

    // The workers pass their slices on untouched (the shares are what a chain kept).
    for (auto [to, from, w] : {std::tuple{to_w0.get(), from_w0.get(), 0u}, std::tuple{to_w1.get(), from_w1.get(), 1u}}) {
        uint64_t idx;
        int tasks = 0;
        while (to->try_recv(idx)) {
            MapTaskSlots::Slot& s = slots[idx];
            uint16_t first, count;
            slots.slice(w, s.input.n, first, count);
            std::copy_n(s.input.d + first, count, s.shares[w].d);
            s.shares[w].n = count;
            ASSERT_TRUE(from->try_send(idx));
            ++tasks;
        }
        EXPECT_EQ(tasks, 2);
        from->close();
    }

    collector.record_failure("collector broke");
    for (int i = 0; i < 100 && !collector.done(); ++i) collector.poll_failed();
    EXPECT_TRUE(collector.done());
    EXPECT_EQ(collector.failure_drops(), 20u) << "both tasks' packets are given back, none emitted";
    PacketDesc d;
    EXPECT_FALSE(out->try_recv(d));
    EXPECT_TRUE(out->closed());
    EXPECT_TRUE(freed->closed());
    EXPECT_EQ(freed->queued(), 2) << "each task's slot goes back to the emitter";
    // The emitter takes them, then ends.
    for (int i = 0; i < 100 && !emitter.done(); ++i) emitter.poll_failed();
    EXPECT_TRUE(emitter.done());
    uint64_t slot;
    EXPECT_FALSE(freed->try_recv(slot)) << "the emitter took every freed slot";
    EXPECT_EQ(collector.failure_drops(), 20u);
    EXPECT_EQ(pool.available(), pool.capacity());
}

}  // namespace
}  // namespace tp
