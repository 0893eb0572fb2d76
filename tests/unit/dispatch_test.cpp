// A node's dispatch to its outputs (NodeTask): an unordered round-robin or flow-hash
// dispatcher passes over a worker that takes nothing, and the end of stream still travels
// after every packet it staged.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/node_task.hpp"

namespace tp {
namespace {

// Descriptors that nothing dereferences: a node without stages only moves them.
std::vector<PacketDesc> numbered(uint32_t n, uint32_t hash_of_odd = 0) {
    std::vector<PacketDesc> d(n);
    for (uint32_t i = 0; i < n; ++i)
        d[i] = PacketDesc{reinterpret_cast<rte_mbuf*>(uintptr_t{64} * (i + 1)), (i & 1) ? hash_of_odd : 0u, 64, 0, 0};
    return d;
}

uint32_t drain(Channel<PacketDesc>& c) {
    PacketDesc d[kBurstMax];
    uint32_t n = 0;
    while (uint32_t k = c.try_recv_burst(d, kBurstMax)) n += k;
    return n;
}

struct Emitter {
    std::unique_ptr<Channel<PacketDesc>> in = make_desc_channel({"ring", 1024, -1});
    std::unique_ptr<Channel<PacketDesc>> stuck = make_desc_channel({"ring", 32, -1});  // never read
    std::unique_ptr<Channel<PacketDesc>> open = make_desc_channel({"ring", 1024, -1});
    std::unique_ptr<NodeTask> task;

    explicit Emitter(Dispatch d) {
        NodeTaskSpec spec;
        spec.inputs = {in.get()};
        spec.outputs = {stuck.get(), open.get()};
        spec.dispatch = d;
        task = std::make_unique<NodeTask>(std::move(spec));
    }
};

TEST(NodeTaskDispatch, AnUnorderedRoundRobinPassesOverAWorkerThatTakesNothing) {
    Emitter e(Dispatch::RoundRobin);
    const std::vector<PacketDesc> d = numbered(640);
    ASSERT_EQ(e.in->try_send_burst(d.data(), 640), 640u);
    uint32_t open = 0;
    for (int i = 0; i < 100; ++i) {
        e.task->poll();
        open += drain(*e.open);
    }
    // The stuck worker holds its ring's 32 and at most what its staging holds; the other
    // worker gets everything else instead of waiting behind it.
    EXPECT_GE(open, 640u - 32u - NodeTask::kGatherBursts * kBurstMax);
    EXPECT_EQ(drain(*e.in), 0u) << "the emitter took every burst";
}

TEST(NodeTaskDispatch, AnUnorderedFlowHashKeepsTakingWhileAWorkerStillHasRoomToStage) {
    // Even packets hash to worker 0 (stuck), odd ones to worker 1: worker 1's flows keep
    // moving until worker 0's staging is full, and no flow changes worker.
    Emitter e(Dispatch::FlowHash);
    const std::vector<PacketDesc> d = numbered(256, 0xffffffffu);
    ASSERT_EQ(e.in->try_send_burst(d.data(), 256), 256u);
    uint32_t open = 0;
    for (int i = 0; i < 100; ++i) {
        e.task->poll();
        open += drain(*e.open);
    }
    EXPECT_EQ(open, 128u) << "every odd packet, past the even ones worker 0 cannot take";
}

TEST(NodeTaskDispatch, TheEndOfStreamWaitsForWhatAPassedOverWorkerStillHasToTake) {
    Emitter e(Dispatch::RoundRobin);
    const std::vector<PacketDesc> d = numbered(128);
    ASSERT_EQ(e.in->try_send_burst(d.data(), 128), 128u);
    e.in->close();
    for (int i = 0; i < 20; ++i) e.task->poll();
    EXPECT_FALSE(e.task->done()) << "packets staged for the stuck worker are still to go";
    EXPECT_FALSE(e.stuck->closed()) << "its end would overtake them";
    uint32_t got = 0;
    for (int i = 0; i < 50 && !e.task->done(); ++i) {
        got += drain(*e.stuck) + drain(*e.open);
        e.task->poll();
    }
    got += drain(*e.stuck) + drain(*e.open);
    EXPECT_TRUE(e.task->done());
    EXPECT_EQ(got, 128u);
    EXPECT_TRUE(e.stuck->closed() && e.open->closed());
}

}  // namespace
}  // namespace tp
