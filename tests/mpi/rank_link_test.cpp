// The link between ranks when one of its ends fails (under `mpirun -np 1`: both ends on rank 0,
// talking to themselves over MPI_COMM_SELF, polled in turn on this thread as tiles would).
// The end that did not fail must still end: a failed receiver goes on taking messages and
// returning their credits until the sender's end arrives, and a failed sender still sends its
// end. Every packet is delivered or counted as a failure's drop, and both pools end full.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <memory>
#include <string>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/transport_ring.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/ranks/rank_link.hpp"
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

constexpr uint32_t kPackets = 3000;  // a dozen messages of 256 at least
constexpr uint32_t kFrameBytes = 100;

// A link's two ends on rank 0, its input fed with kPackets packets and closed.
class Link {
public:
    explicit Link(const std::string& name)
        : src_(spec(name + "_src")), dst_(spec(name + "_dst")), in_(4096), out_(4096) {
        MPI_Comm_dup(MPI_COMM_SELF, &comm_);
        GraphNode node;
        node.rank_link = 0;
        node.peer_rank = 0;
        links_ = std::make_unique<MpiRankLinks>(comm_);
        send_ = links_->make_send(node, &in_);
        receive_ = links_->make_receive(node, &out_, dst_);
        for (uint32_t i = 0; i < kPackets; ++i) {
            rte_mbuf* m = rte_pktmbuf_alloc(src_.get());
            EXPECT_NE(m, nullptr);
            rte_pktmbuf_append(m, kFrameBytes);
            const PacketDesc d(m, i, kFrameBytes, 0, 0);
            EXPECT_TRUE(in_.try_send(d));
        }
        in_.close();
    }
    ~Link() {
        send_.reset();
        receive_.reset();
        MPI_Comm_free(&comm_);
    }

    Task& send() { return *send_; }
    Task& receive() { return *receive_; }

    // One round: each end polled as its tile would (the failure path once it failed), and
    // what the receiving end handed on taken and freed, as the next node would.
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
            for (uint32_t i = 0; i < n; ++i) rte_pktmbuf_free(d[i].mbuf);
    }
    // Rounds until both ends finished or `seconds` passed; whether they finished.
    bool run_until_ended(double seconds) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!(send_->finished() && receive_->finished()) && std::chrono::steady_clock::now() < deadline) round();
        return send_->finished() && receive_->finished();
    }
    uint64_t delivered() const { return delivered_; }
    bool pools_full() const {
        return src_.available() == src_.capacity() && dst_.available() == dst_.capacity();
    }

private:
    static MbufPoolSpec spec(const std::string& name) {
        MbufPoolSpec s;
        s.name = name;
        s.mbufs = 8191;
        s.cache = 0;  // available() exact between rounds
        return s;
    }
    MbufPool src_, dst_;
    RingChannel<PacketDesc> in_, out_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    std::unique_ptr<MpiRankLinks> links_;
    std::unique_ptr<Task> send_, receive_;
    uint64_t delivered_ = 0;
};

TEST(RankLink, AFailedReceiverTakesTheRestOfTheLinkSoTheSenderEnds) {
    Link link("rl_receiver_fails");
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

TEST(RankLink, AFailedSenderStillEndsTheLink) {
    Link link("rl_sender_fails");
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

}  // namespace
}  // namespace tp::test

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    testing::AddGlobalTestEnvironment(new tp::test::MpiEnvironment());
    testing::AddGlobalTestEnvironment(new tp::test::EalEnvironment());
    return RUN_ALL_TESTS();
}
