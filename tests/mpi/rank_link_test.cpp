// The links between ranks, both kinds, with both ends on rank 0 (under `mpirun -np 1`), polled
// in turn on this thread as tiles would: by messages over MPI_COMM_SELF, and lent through a
// RankMemory over MPI_COMM_SELF (rank 0 is on its own host, so it lends to itself).
//
// Every packet arrives in order with its bytes and fields, also a chained one and one from a
// pool the link cannot lend from; both pools end full. The end that did not fail must still
// end: a failed receiver goes on taking what comes (and returning credits or lent packets)
// until the sender's end arrives, and a failed sender still sends its end. A lending sender
// ends only once the receiving rank gave back every packet it lent.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/transport_ring.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/ranks/rank_link.hpp"
#include "framework/ranks/rank_memory.hpp"
#include "tests/support/eal_fixture.hpp"

namespace tp::test {
namespace {

class MpiEnvironment : public testing::Environment {
public:
    void SetUp() override {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    }
    void TearDown() override { MPI_Finalize(); }
};

constexpr uint32_t kPackets = 3000;  // a dozen messages of 256 at least, the lending ring more than once
constexpr uint32_t kFrameBytes = 100;

enum class Kind { Messages, Lent };

uint8_t pattern(uint32_t packet, uint32_t byte) { return static_cast<uint8_t>(packet * 7 + byte); }

MbufPoolSpec pool_spec(const std::string& name) {
    MbufPoolSpec s;
    s.name = name;
    s.mbufs = 8191;
    s.cache = 0;  // available() exact between rounds
    return s;
}

// A link's two ends on rank 0, its input fed with kPackets packets and closed. Packet i has
// kFrameBytes bytes pattern(i, b) and flow hash i; every 11th is a chain of two segments,
// every 7th (not chained) comes from a third pool, outside what the link may lend.
class Link {
public:
    Link(const std::string& name, Kind kind)
        : memory_(make_memory(kind, name)), src_(placed(pool_spec(name + "_src"))),
          dst_(pool_spec(name + "_dst")), other_(pool_spec(name + "_oth")), in_(4096), out_(4096) {
        GraphNode node;
        node.rank_link = 0;
        node.peer_rank = 0;
        links_ = std::make_unique<MpiRankLinks>(comm_.c);
        if (memory_) links_->share(memory_.get());
        send_ = links_->make_send(node, &in_, src_);
        receive_ = links_->make_receive(node, &out_, dst_);
        for (uint32_t i = 0; i < kPackets; ++i) {
            const bool chained = i % 11 == 0, foreign = !chained && i % 7 == 0;
            rte_mbuf* m = rte_pktmbuf_alloc((foreign ? other_ : src_).get());
            EXPECT_NE(m, nullptr);
            auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, chained ? 60 : kFrameBytes));
            for (uint32_t b = 0; b < (chained ? 60 : kFrameBytes); ++b) p[b] = pattern(i, b);
            if (chained) {
                rte_mbuf* tail = rte_pktmbuf_alloc(src_.get());
                auto* q = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(tail, kFrameBytes - 60));
                for (uint32_t b = 60; b < kFrameBytes; ++b) q[b - 60] = pattern(i, b);
                EXPECT_EQ(rte_pktmbuf_chain(m, tail), 0);
            }
            const PacketDesc d(m, i, descriptor_length(m, src_.get()), 0, 0);  // a chain, another pool's: not simple
            EXPECT_TRUE(in_.try_send(d));
        }
        in_.close();
    }
    ~Link() {
        for (rte_mbuf* m : kept_) rte_pktmbuf_free(m);
        send_.reset();
        receive_.reset();
    }

    Task& send() { return *send_; }
    Task& receive() { return *receive_; }

    // One round: each end polled as its tile would (the failure path once it failed), and
    // what the receiving end handed on checked and freed, as the next node would (or, after
    // keep_last(), kept).
    void round() {
        for (Task* t : {send_.get(), receive_.get()}) {
            if (t->finished()) continue;
            if (t->failed()) {
                t->poll_failed();
                continue;
            }
            try {
                t->poll();
            } catch (const std::exception& e) {
                t->record_failure(e.what());
            }
        }
        PacketDesc d[kBurstMax];
        for (uint32_t n; (n = out_.try_recv_burst(d, kBurstMax)) != 0; delivered_ += n)
            for (uint32_t i = 0; i < n; ++i) {
                const uint64_t at = seen_;
                check(d[i]);
                if (at >= keep_from_) {
                    kept_.push_back(d[i].mbuf);
                } else {
                    rte_pktmbuf_free(d[i].mbuf);
                }
            }
    }
    // Rounds until both ends finished or `seconds` passed; whether they finished.
    bool run_until_ended(double seconds) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!(send_->finished() && receive_->finished()) && std::chrono::steady_clock::now() < deadline) round();
        return send_->finished() && receive_->finished();
    }
    void keep_last(uint32_t n) { keep_from_ = kPackets - n; }
    void free_kept() {
        for (rte_mbuf* m : kept_) rte_pktmbuf_free(m);
        kept_.clear();
    }
    uint64_t delivered() const { return delivered_; }
    uint64_t wrong() const { return wrong_; }
    bool pools_full() const {
        return src_.available() == src_.capacity() && dst_.available() == dst_.capacity() &&
               other_.available() == other_.capacity();
    }

private:
    // A communicator of the link's own, freed after everything that uses it.
    struct OwnComm {
        MPI_Comm c = MPI_COMM_NULL;
        OwnComm() { MPI_Comm_dup(MPI_COMM_SELF, &c); }
        ~OwnComm() { MPI_Comm_free(&c); }
        OwnComm(const OwnComm&) = delete;
        OwnComm& operator=(const OwnComm&) = delete;
    };
    std::unique_ptr<RankMemory> make_memory(Kind kind, const std::string& name) const {
        if (kind == Kind::Messages) return nullptr;
        return std::make_unique<RankMemory>(comm_.c, std::vector<RankMemory::SendLink>{{0, 0}},
                                            std::vector<MbufPoolSpec>{pool_spec(name + "_src")}, true);
    }
    MbufPoolSpec placed(MbufPoolSpec spec) const {
        if (memory_) memory_->place_pool(0, spec);
        return spec;
    }
    // The next packet in order, whole: its number, length and every byte.
    void check(const PacketDesc& d) {
        const auto i = static_cast<uint32_t>(seen_);
        bool ok = d.mbuf != nullptr && d.flow_hash == i && rte_pktmbuf_pkt_len(d.mbuf) == kFrameBytes;
        uint8_t bytes[kFrameBytes];
        const auto* p = ok ? static_cast<const uint8_t*>(rte_pktmbuf_read(d.mbuf, 0, kFrameBytes, bytes)) : nullptr;
        for (uint32_t b = 0; ok && b < kFrameBytes; ++b) ok = p[b] == pattern(i, b);
        wrong_ += ok ? 0 : 1;
        ++seen_;
    }

    OwnComm comm_;
    std::unique_ptr<RankMemory> memory_;  // lending: src_'s mbufs are in its segment
    MbufPool src_, dst_, other_;
    RingChannel<PacketDesc> in_, out_;
    std::unique_ptr<MpiRankLinks> links_;
    std::unique_ptr<Task> send_, receive_;
    uint64_t delivered_ = 0, seen_ = 0, wrong_ = 0;
    uint64_t keep_from_ = ~0ull;  // packets from this one on are kept, not freed
    std::vector<rte_mbuf*> kept_;
};

class RankLink : public testing::TestWithParam<Kind> {};

TEST_P(RankLink, EveryPacketArrivesInOrderWithItsBytesAndBothPoolsEndFull) {
    Link link("rl_whole_" + std::to_string(static_cast<int>(GetParam())), GetParam());
    ASSERT_TRUE(link.run_until_ended(10)) << "send finished " << link.send().finished() << ", receive finished "
                                          << link.receive().finished();
    EXPECT_EQ(link.delivered(), kPackets);
    EXPECT_EQ(link.wrong(), 0u) << "packets out of order, or with other bytes";
    EXPECT_EQ(link.send().passed_packets(), kPackets);
    EXPECT_EQ(link.receive().passed_packets(), kPackets);
    EXPECT_TRUE(link.pools_full());
}

TEST_P(RankLink, AFailedReceiverTakesTheRestOfTheLinkSoTheSenderEnds) {
    Link link("rl_receiver_fails_" + std::to_string(static_cast<int>(GetParam())), GetParam());
    for (int i = 0; i < 100000 && link.delivered() < 100; ++i) link.round();
    ASSERT_GE(link.delivered(), 100u);
    link.receive().record_failure("the receiving end failed");
    // Without the receiver taking messages and returning credits, the sender waits for
    // credits forever and never sends its end.
    ASSERT_TRUE(link.run_until_ended(10)) << "send finished " << link.send().finished() << ", receive finished "
                                          << link.receive().finished();
    EXPECT_EQ(link.send().passed_packets(), kPackets);
    EXPECT_EQ(link.send().failure_drops(), 0u);
    EXPECT_EQ(link.delivered() + link.receive().failure_drops(), kPackets)
        << link.delivered() << " delivered, " << link.receive().failure_drops() << " dropped";
    EXPECT_LT(link.delivered(), kPackets) << "the receiver failed before the last message";
    EXPECT_TRUE(link.pools_full());
}

TEST_P(RankLink, AFailedSenderStillEndsTheLink) {
    Link link("rl_sender_fails_" + std::to_string(static_cast<int>(GetParam())), GetParam());
    for (int i = 0; i < 100000 && link.delivered() < 100; ++i) link.round();
    ASSERT_GE(link.delivered(), 100u);
    link.send().record_failure("the sending end failed");
    // Without the sender's end message the receiving end waits for it forever.
    ASSERT_TRUE(link.run_until_ended(10)) << "send finished " << link.send().finished() << ", receive finished "
                                          << link.receive().finished();
    EXPECT_EQ(link.delivered(), link.send().passed_packets()) << "what the sender sent arrives";
    EXPECT_EQ(link.send().passed_packets() + link.send().failure_drops(), kPackets)
        << link.send().passed_packets() << " sent, " << link.send().failure_drops() << " dropped";
    EXPECT_LT(link.delivered(), kPackets) << "the sender failed before the last message";
    EXPECT_EQ(link.receive().failure_drops(), 0u);
    EXPECT_TRUE(link.pools_full());
}

// The sender's pool is whole at its end only if it waited for what it lent: a packet the next
// node keeps holds the sending end open until it is freed.
TEST(RankLinkLent, ASenderEndsOnlyOnceEveryPacketItLentCameBack) {
    Link link("rl_kept", Kind::Lent);
    link.keep_last(5);
    ASSERT_FALSE(link.run_until_ended(1)) << "the sender ended with 5 of its packets still lent";
    EXPECT_TRUE(link.receive().finished());
    EXPECT_EQ(link.delivered(), kPackets);
    link.free_kept();
    ASSERT_TRUE(link.run_until_ended(10)) << "the sender did not end once its packets came back";
    EXPECT_TRUE(link.pools_full());
}

INSTANTIATE_TEST_SUITE_P(Kinds, RankLink, testing::Values(Kind::Messages, Kind::Lent),
                         [](const testing::TestParamInfo<Kind>& k) { return k.param == Kind::Messages ? "Messages" : "Lent"; });

}  // namespace
}  // namespace tp::test

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    testing::AddGlobalTestEnvironment(new tp::test::MpiEnvironment());
    testing::AddGlobalTestEnvironment(new tp::test::EalEnvironment());
    return RUN_ALL_TESTS();
}
