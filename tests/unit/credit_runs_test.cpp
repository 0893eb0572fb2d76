// Runs on the shared-memory network (framework/noc/detail/item_runs.hpp): a credit
// interface's burst crosses as one message, and a receiver takes runs whole or in parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "framework/noc/asymmetric_credit_channel.hpp"
#include "framework/noc/credit_channel.hpp"
#include "framework/noc/message_network.hpp"
#include "tests/support/noc_shapes.hpp"

namespace tp::noc {
namespace {

using test::credit_link;
using test::one_queue_net;

// Senders 0..n-1 into tile n's one queue of `queue_words`: the asymmetric interface, 1-word items.
struct Gather {
    Gather(uint32_t senders, uint32_t queue_words, uint32_t credits)
        : net(one_queue_net(senders + 1, queue_words)),
          channel(net, [&] {
              AsymmetricCreditConfig c;
              c.receiver = senders;
              for (TileId s = 0; s < senders; ++s) c.senders.push_back(s);
              c.credits = credits;
              c.payload_words = 1;
              return c;
          }()) {}
    MessageNetwork net;
    AsymmetricCreditChannel<MessageNetwork> channel;
};

TEST(CreditRuns, ABurstOfDescriptorsCrossesAsOneMessageOf16BytesEach) {
    // 32 two-word items in one send: one header and 64 words, where one message per item
    // took 32 headers (24 bytes a descriptor instead of 16).
    MessageNetwork net(one_queue_net(2, 256));
    CreditChannel<MessageNetwork> link(net, credit_link(32, 2));
    uint64_t words[64];
    for (uint64_t i = 0; i < 64; ++i) words[i] = 1000 + i;
    ASSERT_EQ(link.sender().try_send_many(words, 32), 32u);
    EXPECT_EQ(net.queued_words(1, 0), 65u) << "one header for the 32 items";
    uint64_t got[64] = {};
    ASSERT_EQ(link.receiver().try_recv_burst(got, 32), 32u);
    for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(got[i], 1000 + i) << i;
    EXPECT_EQ(net.counters(1, 0).messages, 1u);
    EXPECT_EQ(net.queued_words(1, 0), 0u) << "every word handed back";
}

// Sends rounds of K items as one run, and takes each round back in receives of 3, 1 (try_recv),
// 2 and the rest: most receives split the run; over the rounds the ring wraps.
void split_rounds(uint32_t payload_words) {
    constexpr uint32_t kCredits = 10, kRounds = 12;
    MessageNetwork net(one_queue_net(2, 64));
    CreditChannel<MessageNetwork> link(net, credit_link(kCredits, payload_words));
    const uint32_t n = payload_words;
    for (uint32_t round = 0; round < kRounds; ++round) {  // 12 x (10n + 1) words through 64
        std::vector<uint64_t> words(size_t{kCredits} * n);
        for (uint64_t i = 0; i < words.size(); ++i) words[i] = 1000 * round + i;
        ASSERT_EQ(link.sender().try_send_many(words.data(), kCredits), kCredits) << "round " << round;
        ASSERT_EQ(link.sender().try_send_many(words.data(), 1), 0u) << "all K in flight";
        std::vector<uint64_t> got(words.size(), 0);
        ASSERT_EQ(link.receiver().try_recv_burst(got.data(), 3), 3u);
        TileId source = 99;
        ASSERT_TRUE(link.receiver().try_recv(got.data() + 3 * n, source));
        EXPECT_EQ(source, 0u);
        ASSERT_EQ(link.receiver().try_recv_burst(got.data() + 4 * n, 2), 2u);
        ASSERT_EQ(link.receiver().try_recv_burst(got.data() + 6 * n, 32), 4u) << "the rest of the run, and no more";
        EXPECT_EQ(got, words) << "round " << round;
        EXPECT_EQ(net.queued_words(1, 0), 0u) << "round " << round;
    }
    // The receives returned all K each round: the sender has them again.
    std::vector<uint64_t> more(size_t{kCredits} * n, 0);
    EXPECT_EQ(link.sender().try_send_many(more.data(), kCredits), kCredits);
    EXPECT_EQ(link.receiver().strays(), 0u);
}

TEST(CreditRuns, AReceiveOfFewerItemsThanARunHoldsLeavesTheRestInOrderAndEveryCreditComesBack) {
    split_rounds(1);
}

TEST(CreditRuns, DescriptorRunsSplitLikeWordRuns) {
    split_rounds(2);
}

TEST(CreditRuns, ASendOfMoreItemsThanAMessageCarriesGoesAsSeveralRuns) {
    NetworkConfig shape = one_queue_net(2, 64);
    shape.max_payload = 4;  // two descriptors a message
    MessageNetwork net(shape);
    CreditChannel<MessageNetwork> link(net, credit_link(8, 2));
    uint64_t words[16];
    for (uint64_t i = 0; i < 16; ++i) words[i] = i;
    ASSERT_EQ(link.sender().try_send_many(words, 7), 7u);
    EXPECT_EQ(net.queued_words(1, 0), 3u * 5 + 3) << "runs of 2, 2, 2 and 1";
    uint64_t got[16] = {};
    ASSERT_EQ(link.receiver().try_recv_burst(got, 16), 7u);
    for (uint64_t i = 0; i < 14; ++i) EXPECT_EQ(got[i], i);
    EXPECT_EQ(net.counters(1, 0).messages, 4u);
}

TEST(CreditRuns, AMessageThatIsNoRunOfTheInterfacesItemsIsDroppedAsAStrayAndTheRunsBehindItArrive) {
    MessageNetwork net(one_queue_net(2, 128));
    CreditChannelConfig c = credit_link(8, 2);
    CreditChannel<MessageNetwork> link(net, c);
    // Three words on the data tag from the sender's tile: not a whole number of 2-word items.
    const uint64_t odd[3] = {1, 2, 3};
    ASSERT_TRUE(net.try_push_credited(net.route(c.sender, c.receiver, c.data_tag), odd, 3));
    const uint64_t words[4] = {10, 11, 12, 13};
    ASSERT_EQ(link.sender().try_send_many(words, 2), 2u);
    uint64_t got[4] = {};
    ASSERT_EQ(link.receiver().try_recv_burst(got, 2), 2u);
    EXPECT_EQ(link.receiver().strays(), 1u);
    for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], 10 + i);
}

TEST(CreditRuns, ManySendersRunsSplitByShortReceivesKeepEachSendersOrder) {
    // Senders race runs of up to 7 into one queue; the receiver takes 3 at a time, so most
    // receives split a run. Every item arrives once, in its sender's order.
    constexpr uint32_t kSenders = 4, kItems = 20000;
    Gather g(kSenders, 256, 16);
    auto& gather = g.channel;
    std::vector<std::thread> senders;
    for (uint32_t s = 0; s < kSenders; ++s)
        senders.emplace_back([&gather, s] {
            uint64_t run[7];
            for (uint32_t sent = 0; sent < kItems;) {
                const uint32_t want = std::min<uint32_t>(1 + sent % 7, kItems - sent);
                for (uint32_t i = 0; i < want; ++i) run[i] = (uint64_t{s} << 32) | (sent + i);
                const uint32_t m = gather.sender(s).try_send_many(run, want);
                if (m == 0) std::this_thread::yield();
                sent += m;
            }
        });
    std::vector<uint64_t> next(kSenders, 0);
    uint64_t wrong = 0, received = 0;
    while (received < uint64_t{kSenders} * kItems) {
        uint64_t got[3];
        const uint32_t n = gather.receiver().try_recv_burst(got, 3);
        if (n == 0) std::this_thread::yield();
        for (uint32_t i = 0; i < n; ++i, ++received) {
            const uint64_t s = got[i] >> 32;
            if (s >= kSenders || (got[i] & 0xffffffffu) != next[s]) {
                ++wrong;
                continue;
            }
            ++next[s];
        }
    }
    for (auto& t : senders) t.join();
    EXPECT_EQ(wrong, 0u);
    for (uint32_t s = 0; s < kSenders; ++s) EXPECT_EQ(next[s], kItems) << "sender " << s;
    EXPECT_EQ(g.net.queued_words(kSenders, 0), 0u);
}

TEST(CreditRuns, WhatOneSendSendsArrivesTogetherHoweverTheSendersRace) {
    // Senders sharing a queue send what one try_send_many sends as one run, in one
    // reservation: the receiver finds those items together, however the senders race.
    constexpr uint32_t kSenders = 4, kItems = 40000, kRun = 8;
    Gather g(kSenders, 1024, 32);
    auto& gather = g.channel;
    // A word: sender (8 bits), the send call (32), the message's index within that call (8).
    std::vector<std::thread> senders;
    for (uint32_t s = 0; s < kSenders; ++s)
        senders.emplace_back([&gather, s] {
            uint64_t run[kRun];
            uint64_t call = 0;
            for (uint32_t sent = 0; sent < kItems;) {
                for (uint32_t i = 0; i < kRun; ++i) run[i] = (uint64_t{s} << 56) | (call << 8) | i;
                const uint32_t m = gather.sender(s).try_send_many(run, kItems - sent < kRun ? kItems - sent : kRun);
                if (m == 0) std::this_thread::yield();
                sent += m;
                ++call;
            }
        });
    uint64_t split = 0, received = 0, prev = 0;
    uint64_t burst[32];
    while (received < uint64_t{kSenders} * kItems) {
        const uint32_t n = gather.receiver().try_recv_burst(burst, 32);
        if (n == 0) std::this_thread::yield();
        for (uint32_t i = 0; i < n; ++i, ++received) {
            const uint64_t w = burst[i];
            // Message i > 0 of a call follows message i - 1 of the same call and sender.
            if ((w & 0xff) != 0 && w != prev + 1) ++split;
            prev = w;
        }
    }
    for (auto& t : senders) t.join();
    EXPECT_EQ(split, 0u);
}

}  // namespace
}  // namespace tp::noc
