// tp::PacketAccelerator (include/tilepipe/packet_accelerator.hpp): an app fed packets by the
// test's thread through the `offload` source, read back from the `results` sink.
#include <gtest/gtest.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tilepipe/app.hpp"
#include "tilepipe/packet_accelerator.hpp"

using namespace tp;

namespace {

constexpr uint16_t kFrame = 64;

// A UDP/IPv4 frame whose payload starts with `seq`, in an mbuf of the app's pool.
rte_mbuf* make_packet(PacketAccelerator& acc, uint32_t seq) {
    rte_mbuf* m = acc.alloc();
    if (m == nullptr) return nullptr;
    auto* p = rte_pktmbuf_mtod(m, uint8_t*);
    std::memset(p, 0, kFrame);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(kFrame - sizeof(rte_ether_hdr));
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, seq & 0xff));
    ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 1, 0, 1));
    auto* uh = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    uh->src_port = rte_cpu_to_be_16(1024);
    uh->dst_port = rte_cpu_to_be_16(80);
    uh->dgram_len = rte_cpu_to_be_16(kFrame - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr));
    std::memcpy(uh + 1, &seq, sizeof(seq));
    m->data_len = m->pkt_len = kFrame;
    return m;
}

uint32_t seq_of(const rte_mbuf* m) {
    uint32_t seq;
    std::memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t*, sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr)),
                sizeof(seq));
    return seq;
}

// Offloads n packets (all before reading any), ends the stream, reads every result (freeing
// it) and returns their sequence numbers in arrival order.
std::vector<uint32_t> offload_all(PacketAccelerator& acc, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
        rte_mbuf* m = make_packet(acc, i);
        EXPECT_NE(m, nullptr) << "pool empty at packet " << i;
        if (m == nullptr) break;
        acc.offload(m);
    }
    acc.end_of_stream();
    std::vector<uint32_t> seqs;
    rte_mbuf* r = nullptr;
    while (acc.get_result(r)) {
        seqs.push_back(seq_of(r));
        rte_pktmbuf_free(r);
    }
    return seqs;
}

void expect_accounted(const Report& rep, uint64_t offloaded, uint64_t results) {
    EXPECT_EQ(rep.packets, offloaded);
    EXPECT_EQ(rep.delivered, results);
    EXPECT_EQ(rep.delivered + rep.drops, offloaded);
    EXPECT_EQ(rep.unaccounted, 0);
    EXPECT_TRUE(rep.pools_full) << rep.text;
    EXPECT_EQ(rep.exit_status, 0) << rep.text;
}

}  // namespace

// More packets than the offload channel and the pool's share in flight hold, offloaded before
// any is read: the accelerator keeps results meanwhile, nothing deadlocks, nothing is lost.
TEST(PacketAccelerator, PipelineKeepsOrderAndAccountsForEveryPacket) {
    Runtime runtime;
    AppBuilder app("accel_pipeline");
    app.pipeline({app.stage("offload", {{"capacity", 64}}), app.stage("parse"), app.stage("sample", {{"every", 3}}),
                  app.stage("results", {{"capacity", 64}})});
    PacketAccelerator acc(app, runtime);
    const uint32_t n = 5000;
    const std::vector<uint32_t> seqs = offload_all(acc, n);
    ASSERT_EQ(seqs.size(), (n + 2) / 3);  // sample keeps the first of every 3
    for (size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], 3 * i) << "result " << i;
    const Report rep = acc.wait();
    expect_accounted(rep, n, seqs.size());
    ASSERT_NE(rep.node("sample"), nullptr);
    EXPECT_EQ(rep.node("sample")->drops, n - seqs.size());
}

TEST(PacketAccelerator, OrderedFarmOfTwoReturnsEveryPacketInOrder) {
    Runtime runtime;
    AppBuilder app("accel_farm");
    Farm farm = app.farm("fw").workers(2).dispatch("round_robin").collect("ordered").worker({app.stage("parse")});
    app.pipeline({app.stage("offload"), farm, app.stage("results")});
    PacketAccelerator acc(app, runtime);
    const uint32_t n = 4000;
    const std::vector<uint32_t> seqs = offload_all(acc, n);
    ASSERT_EQ(seqs.size(), n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(seqs[i], i);
    expect_accounted(acc.wait(), n, n);
}

TEST(PacketAccelerator, UnorderedFarmThenFilterReturnsEveryKeptPacketOnce) {
    Runtime runtime;
    AppBuilder app("accel_farm_unordered");
    Farm farm = app.farm("fw").workers(2).dispatch("on_demand").worker({app.stage("parse")});
    app.pipeline({app.stage("offload"), farm, app.stage("bpf_filter", {{"expr", "not src host 10.0.0.5"}}),
                  app.stage("results")});
    PacketAccelerator acc(app, runtime);
    const uint32_t n = 3000;
    std::vector<uint32_t> seqs = offload_all(acc, n);
    std::sort(seqs.begin(), seqs.end());
    std::vector<uint32_t> kept;
    for (uint32_t i = 0; i < n; ++i)
        if ((i & 0xff) != 5) kept.push_back(i);
    ASSERT_EQ(seqs, kept);
    const Report rep = acc.wait();
    expect_accounted(rep, n, kept.size());
    EXPECT_EQ(rep.drops, n - kept.size());
}

// One packet at a time, read back before the next (the try calls too), results offloaded again.
TEST(PacketAccelerator, PingPongWithTryCallsAndReoffloadedResults) {
    Runtime runtime;
    AppBuilder app("accel_pingpong");
    app.pipeline({app.stage("offload"), app.stage("parse"), app.stage("results")});
    PacketAccelerator acc(app, runtime);
    rte_mbuf* m = make_packet(acc, 7);
    ASSERT_NE(m, nullptr);
    for (int round = 0; round < 100; ++round) {
        if (round % 2 == 0) acc.offload(m);
        else ASSERT_TRUE(acc.try_offload(m));
        rte_mbuf* r = nullptr;
        if (round % 2 == 0) {
            ASSERT_TRUE(acc.get_result(r));
        } else {
            while (!acc.try_get_result(r)) {
            }
        }
        ASSERT_EQ(r, m);  // the same mbuf, back to the caller
        ASSERT_EQ(seq_of(r), 7u);
    }
    // Everything offloaded was read back and the stream goes on: waiting could only hang.
    rte_mbuf* r = nullptr;
    EXPECT_THROW(acc.get_result(r), PacketAcceleratorError);
    rte_pktmbuf_free(m);
    acc.end_of_stream();
    EXPECT_FALSE(acc.get_result(r));
    EXPECT_FALSE(acc.try_get_result(r));
    rte_mbuf* late = acc.alloc();
    ASSERT_NE(late, nullptr);
    EXPECT_THROW(acc.offload(late), PacketAcceleratorError);
    EXPECT_THROW(acc.try_offload(late), PacketAcceleratorError);
    EXPECT_THROW(acc.end_of_stream(), PacketAcceleratorError);
    rte_pktmbuf_free(late);  // refused: still the caller's
    expect_accounted(acc.wait(), 100, 100);
}

// Packets a stage dropped never come back: with every other one read, waiting for more could
// only hang, so get_result says so once the stages' counters show the drops.
TEST(PacketAccelerator, WaitingForResultsAStageDroppedIsAnError) {
    Runtime runtime;
    AppBuilder app("accel_dropped");
    app.pipeline({app.stage("offload"), app.stage("parse"), app.stage("bpf_filter", {{"expr", "not src host 10.0.0.1"}}),
                  app.stage("results")});
    PacketAccelerator acc(app, runtime);
    for (uint32_t i = 0; i < 4; ++i) {
        rte_mbuf* m = make_packet(acc, i);
        ASSERT_NE(m, nullptr);
        acc.offload(m);
    }
    rte_mbuf* r = nullptr;
    for (int i = 0; i < 3; ++i) {  // 10.0.0.1 (packet 1) is filtered out
        ASSERT_TRUE(acc.get_result(r));
        rte_pktmbuf_free(r);
    }
    try {
        acc.get_result(r);
        ADD_FAILURE() << "get_result returned with nothing in flight";
    } catch (const PacketAcceleratorError& e) {
        EXPECT_NE(std::string(e.what()).find("dropped by a stage (1 dropped)"), std::string::npos) << e.what();
    }
    acc.end_of_stream();
    EXPECT_FALSE(acc.get_result(r));
    expect_accounted(acc.wait(), 4, 3);
}

// A stage that throws: reading results (and offloading) fails naming it instead of hanging,
// and the report still accounts for every offloaded packet.
TEST(PacketAccelerator, FailedStageIsAnErrorNamingIt) {
    Runtime runtime;
    AppBuilder app("accel_fail");
    app.pipeline({app.stage("offload"), app.stage("throw_after", {{"packets", 100}, {"message", "bad packet"}}),
                  app.stage("results")});
    PacketAccelerator acc(app, runtime);
    uint32_t offloaded = 0;
    std::string error;
    try {
        for (; offloaded < 3000; ++offloaded) {
            rte_mbuf* m = make_packet(acc, offloaded);
            if (m == nullptr) break;  // the pool is in the failed app's hands
            acc.offload(m);
        }
        acc.end_of_stream();
        rte_mbuf* r = nullptr;
        while (acc.get_result(r)) rte_pktmbuf_free(r);
    } catch (const PacketAcceleratorError& e) {
        error = e.what();
    }
    EXPECT_NE(error.find("throw_after"), std::string::npos) << error;
    EXPECT_NE(error.find("bad packet"), std::string::npos) << error;
    rte_mbuf* r = nullptr;
    EXPECT_THROW(acc.get_result(r), PacketAcceleratorError);
    EXPECT_THROW(acc.try_get_result(r), PacketAcceleratorError);
    const Report rep = acc.wait();
    EXPECT_NE(rep.exit_status, 0);
    EXPECT_EQ(rep.packets, offloaded);
    EXPECT_EQ(rep.delivered + rep.drops, offloaded) << rep.text;
}

TEST(PacketAccelerator, OffloadAndResultsStagesRefuseToRunOnTheirOwn) {
    AppBuilder app("alone");
    app.pipeline({app.stage("offload"), app.stage("parse"), app.stage("results")});
    try {
        app.validate();
        FAIL() << "an offload source validated outside an accelerator";
    } catch (const AppError& e) {
        EXPECT_NE(std::string(e.what()).find("tp::PacketAccelerator"), std::string::npos) << e.what();
    }
    AppBuilder sink_only("sink_only");
    sink_only.pipeline({sink_only.stage("synth", {{"count", 10}}), sink_only.stage("results")});
    EXPECT_THROW(sink_only.validate(), AppError);
}

TEST(PacketAccelerator, AnAppWithoutResultsSinkIsRefused) {
    Runtime runtime;
    AppBuilder app("no_results");
    app.pipeline({app.stage("offload"), app.stage("drop")});
    try {
        PacketAccelerator acc(app, runtime);
        FAIL() << "an accelerator started without a results sink";
    } catch (const AppError& e) {
        EXPECT_NE(std::string(e.what()).find("results"), std::string::npos) << e.what();
    }
}

// Results the caller frees after the app ended count: wait() reads the pool after them. The
// last get_result (false) returns only once the run ended, so the run's own look at the pool
// saw every result still held.
TEST(PacketAccelerator, ResultsFreedAfterTheRunEndedLeaveThePoolFull) {
    Runtime runtime;
    AppBuilder app("accel_held");
    app.pipeline({app.stage("offload"), app.stage("pass"), app.stage("results")});
    PacketAccelerator acc(app, runtime);
    for (uint32_t i = 0; i < 200; ++i) acc.offload(make_packet(acc, i));
    acc.end_of_stream();
    std::vector<rte_mbuf*> held;
    rte_mbuf* r = nullptr;
    while (acc.get_result(r)) held.push_back(r);
    ASSERT_EQ(held.size(), 200u);
    for (rte_mbuf* m : held) rte_pktmbuf_free(m);
    expect_accounted(acc.wait(), 200, 200);
}

// Results nobody read are freed by wait(): the pool is full at the end all the same.
TEST(PacketAccelerator, WaitFreesUnreadResults) {
    Runtime runtime;
    AppBuilder app("accel_unread");
    app.pipeline({app.stage("offload"), app.stage("pass"), app.stage("results", {{"capacity", 16}})});
    PacketAccelerator acc(app, runtime);
    for (uint32_t i = 0; i < 500; ++i) acc.offload(make_packet(acc, i));
    acc.end_of_stream();
    expect_accounted(acc.wait(), 500, 500);
}
