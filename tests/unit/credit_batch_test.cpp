// Coalesced credits (framework/noc/credit_receiver.hpp): a receiver returns a sender's
// credits once it owes it max(1, K / 4), in one message, and a sender out of credits always
// has items in the receiver's queue, so holding credits back never stalls a link.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "framework/noc/asymmetric_credit_channel.hpp"
#include "framework/noc/credit_channel.hpp"
#include "framework/noc/message_network.hpp"
#include "tests/support/noc_shapes.hpp"

namespace tp::noc {
namespace {

using test::credit_link;
using test::one_queue_net;

TEST(CreditBatch, SingleItemsGetTheirCreditsBackAQuarterOfKAtATimeInOneMessage) {
    // K = 16: items one at a time, each received at once. Credits go back after every
    // fourth receive, four in one message (a header and the count: 2 words in the sender's
    // ack queue), not one message per item.
    MessageNetwork net(one_queue_net(2, 256));
    CreditChannel<MessageNetwork> link(net, credit_link(16));
    for (uint64_t i = 1; i <= 12; ++i) {
        ASSERT_TRUE(link.sender().try_send(&i));
        uint64_t got = 0;
        TileId source = 9;
        ASSERT_TRUE(link.receiver().try_recv(&got, source));
        EXPECT_EQ(got, i);
        // The sender took its K when it first sent and does not look at its acks until it
        // runs short: every credit message returned so far waits there.
        EXPECT_EQ(net.queued_words(0, 0), 2 * (i / 4))
            << "after item " << i;
    }
    // Three messages of four credits wait in the ack queue; a send takes them all.
    EXPECT_EQ(link.sender().credits_held(), 4u);
    uint64_t more[16] = {};
    EXPECT_EQ(link.sender().try_send_many(more, 16), 16u);
    EXPECT_EQ(net.queued_words(0, 0), 0u);
}

TEST(CreditBatch, ASmallKGetsEveryCreditBackAtOnce) {
    // K < 8: the batch is 1, each receive returns what it took.
    MessageNetwork net(one_queue_net(2, 64));
    CreditChannel<MessageNetwork> link(net, credit_link(4));
    const uint64_t one = 7;
    ASSERT_TRUE(link.sender().try_send(&one));
    uint64_t got = 0;
    TileId source = 9;
    ASSERT_TRUE(link.receiver().try_recv(&got, source));
    EXPECT_EQ(net.queued_words(0, 0), 2u) << "one credit message after one receive";
}

// Drives n senders of K credits each into one receiver in a random order of sends and
// receives of random sizes, and checks after every step what makes holding credits back
// safe: a sender that cannot send has items waiting in the receiver's queue.
void random_schedule(uint32_t senders, uint32_t credits, uint32_t seed) {
    MessageNetwork net(one_queue_net(senders + 1, 1024));
    AsymmetricCreditConfig c;
    c.receiver = senders;
    for (TileId s = 0; s < senders; ++s) c.senders.push_back(s);
    c.credits = credits;
    c.payload_words = 1;
    AsymmetricCreditChannel<MessageNetwork> g(net, c);
    std::mt19937 rng(seed);
    std::vector<uint64_t> sent(senders, 0), queued(senders, 0), next(senders, 0);
    for (int step = 0; step < 20000; ++step) {
        if (rng() % 2 == 0) {
            const uint32_t s = rng() % senders;
            const uint32_t want = 1 + rng() % credits;
            std::vector<uint64_t> items(want);
            for (uint32_t i = 0; i < want; ++i) items[i] = (uint64_t{s} << 32) | (sent[s] + i);
            const uint32_t m = g.sender(s).try_send_many(items.data(), want);
            sent[s] += m;
            queued[s] += m;
            if (m == 0)
                ASSERT_GT(queued[s], 0u) << "step " << step << ": sender " << s
                                          << " is out of credits with none of its items in the queue";
        } else {
            std::vector<uint64_t> got(1 + rng() % (2 * credits));
            const uint32_t n = g.receiver().try_recv_burst(got.data(), static_cast<uint32_t>(got.size()));
            for (uint32_t i = 0; i < n; ++i) {
                const uint64_t s = got[i] >> 32;
                ASSERT_LT(s, senders);
                ASSERT_EQ(got[i] & 0xffffffffu, next[s]) << "sender " << s << "'s order";
                ++next[s];
                --queued[s];
            }
        }
    }
    // Drained, every sender can send again.
    std::vector<uint64_t> rest(64);
    while (g.receiver().try_recv_burst(rest.data(), 64) != 0) {
    }
    for (uint32_t s = 0; s < senders; ++s) {
        const uint64_t item = uint64_t{s} << 32;
        EXPECT_EQ(g.sender(s).try_send_many(&item, 1), 1u) << "sender " << s;
    }
}

TEST(CreditBatch, ASenderOutOfCreditsAlwaysHasItemsInTheQueue) {
    for (uint32_t k : {1u, 4u, 5u, 8u, 16u, 33u}) {
        SCOPED_TRACE("K = " + std::to_string(k));
        random_schedule(1, k, 11 * k);
        random_schedule(3, k, 13 * k);
    }
}

}  // namespace
}  // namespace tp::noc
