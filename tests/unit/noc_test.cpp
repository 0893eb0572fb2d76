// Messaging network: what a tile relies on from either backend (shared memory and DPDK
// event device): tag demultiplexing and the catch-all, whole messages in order, full and
// empty queues, blocking push/pop, message atomicity under many concurrent senders; and
// from the interfaces on top: credits (exhaustion blocks, then resumes), the K bound, the
// many-to-one interface, logical channels sharing a queue, the `udn` transport on a shared
// network.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/packet_desc.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/channel/transport_udn.hpp"
#include "framework/noc/asymmetric_credit_channel.hpp"
#include "framework/noc/credit_channel.hpp"
#include "framework/noc/eventdev_network.hpp"
#include "framework/noc/logical_channel.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/noc/queue_demux.hpp"
#include "framework/topology/topology.hpp"

namespace tp::noc {
namespace {

using namespace std::chrono_literals;

NetworkConfig shape(uint32_t tiles, uint32_t queues = 4, uint32_t queue_words = 128) {
    NetworkConfig c;
    c.tiles = tiles;
    c.queues = queues;
    c.queue_words = queue_words;
    return c;
}

// A policy whose park phase would sleep for ages: finishing quickly proves a wake-up came.
WaitPolicy sleepy_policy() {
    WaitPolicy p;
    p.spin_rounds = 4;
    p.yield_rounds = 2;
    p.park_timeout = 30s;
    return p;
}

template <typename Net>
class NetworkContract : public testing::Test {};
using Backends = testing::Types<MessageNetwork, EventdevNetwork>;
struct BackendNames {
    template <typename Net>
    static std::string GetName(int) {
        return Net::kBackend;
    }
};
TYPED_TEST_SUITE(NetworkContract, Backends, BackendNames);

TYPED_TEST(NetworkContract, ConfigsThatBreakAShapeRuleAreRejectedWithTheRule) {
    auto message = [](NetworkConfig c) {
        try {
            TypeParam net(c);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    NetworkConfig c = shape(2);
    c.queue_words = 100;
    EXPECT_NE(message(c).find("queue_words must be a power of two"), std::string::npos) << message(c);
    c = shape(2);
    c.queues = 0;
    EXPECT_NE(message(c).find("queues per tile must be between 1 and 254"), std::string::npos) << message(c);
    c = shape(2, 4, 64);
    c.max_payload = 127;
    EXPECT_NE(message(c).find("does not fit a 64-word queue"), std::string::npos) << message(c);
    c.max_payload = 0;  // as long as the queue allows
    EXPECT_EQ(TypeParam(c).config().max_payload, 63u);
    c = shape(0);
    EXPECT_NE(message(c).find("tiles must be between 1"), std::string::npos) << message(c);
    EXPECT_NE(message(c).find(TypeParam::kBackend), std::string::npos) << message(c);
}

TYPED_TEST(NetworkContract, BoundTagsLandInTheirQueueAndEveryOtherTagInTheCatchAll) {
    TypeParam net(shape(2));
    net.bind_tag(1, 7, 1);
    net.bind_tag(1, 9, 3);
    EXPECT_EQ(net.queue_of(1, 7), 1u);
    EXPECT_EQ(net.queue_of(1, 11), net.catch_all());
    EXPECT_EQ(net.queue_of(0, 7), net.catch_all());  // tables are per tile
    const uint64_t w = 42;
    for (Tag t : {7, 9, 11, 7}) ASSERT_TRUE(net.try_push(0, 1, t, &w, 1));

    MessageHeader h;
    uint64_t payload[kMaxPayload];
    auto pop_tag = [&](uint32_t queue) -> int {
        if (!net.try_pop(1, queue, h, payload)) return -1;
        EXPECT_EQ(h.source, 0u);
        EXPECT_EQ(h.length, 1u);
        EXPECT_EQ(payload[0], 42u);
        return h.tag;
    };
    EXPECT_EQ(pop_tag(1), 7);
    EXPECT_EQ(pop_tag(1), 7);
    EXPECT_EQ(pop_tag(1), -1);
    EXPECT_EQ(pop_tag(3), 9);
    EXPECT_EQ(pop_tag(net.catch_all()), 11);
    EXPECT_EQ(pop_tag(0), -1);
    EXPECT_EQ(pop_tag(2), -1);

    net.unbind_tag(1, 9);
    ASSERT_TRUE(net.try_push(0, 1, 9, &w, 1));
    EXPECT_EQ(pop_tag(net.catch_all()), 9);
    EXPECT_THROW(net.bind_tag(1, 5, net.catch_all()), std::out_of_range);  // bind to a demux queue
}

TYPED_TEST(NetworkContract, MessagesOfEveryLengthArriveWholeWithTheirHeaderInPushOrder) {
    TypeParam net(shape(3, 1, 256));
    std::vector<uint64_t> words(kMaxPayload);
    uint64_t out[kMaxPayload];
    MessageHeader h;
    for (uint32_t len = 0; len <= kMaxPayload; ++len) {
        for (uint32_t i = 0; i < len; ++i) words[i] = len * 1000 + i;
        ASSERT_TRUE(net.try_push(2, 0, static_cast<Tag>(len), words.data(), len)) << len;
        ASSERT_TRUE(net.try_pop(0, net.catch_all(), h, out)) << len;
        EXPECT_EQ(h.source, 2u);
        EXPECT_EQ(h.tag, len);
        ASSERT_EQ(h.length, len);
        for (uint32_t i = 0; i < len; ++i) ASSERT_EQ(out[i], len * 1000 + i) << len;
    }
    // Several queued at once keep their order.
    for (uint64_t v = 0; v < 20; ++v) ASSERT_TRUE(net.try_push(1, 0, 3, &v, 1));
    for (uint64_t v = 0; v < 20; ++v) {
        ASSERT_TRUE(net.try_pop(0, net.catch_all(), h, out));
        EXPECT_EQ(out[0], v);
    }
}

TYPED_TEST(NetworkContract, AFullQueueRefusesThePushAndCountsAStallAndCountersAddUp) {
    TypeParam net(shape(2, 1, 16));
    const uint64_t payload[3] = {1, 2, 3};
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(net.try_push(0, 1, 0, payload, 3));  // 4 x 4 words = 16
    EXPECT_EQ(net.queued_words(1, net.catch_all()), 16u);
    EXPECT_FALSE(net.try_push(0, 1, 0, payload, 0));  // not even a header fits
    EXPECT_EQ(net.counters(1, net.catch_all()).stalls, 1u);
    MessageHeader h;
    uint64_t out[kMaxPayload];
    ASSERT_TRUE(net.try_pop(1, net.catch_all(), h, out));
    ASSERT_TRUE(net.try_push(0, 1, 0, payload, 3));   // the 4 words that pop freed
    EXPECT_FALSE(net.try_push(0, 1, 0, payload, 0));  // and no more
    while (net.try_pop(1, net.catch_all(), h, out)) {
    }
    EXPECT_FALSE(net.try_pop(1, net.catch_all(), h, out));
    const QueueCounters c = net.counters(1, net.catch_all());
    EXPECT_EQ(c.messages, 5u);
    EXPECT_EQ(c.words, 15u);
    EXPECT_EQ(c.stalls, 2u);
    EXPECT_EQ(net.queued_words(1, net.catch_all()), 0u);
}

TYPED_TEST(NetworkContract, BadTilesQueuesAndLengthsThrowNamingTheValue) {
    TypeParam net(shape(2, 2));
    const uint64_t w = 0;
    MessageHeader h;
    uint64_t out[kMaxPayload];
    EXPECT_THROW(net.try_push(0, 2, 0, &w, 1), std::out_of_range);
    EXPECT_THROW(net.try_pop(0, 3, h, out), std::out_of_range);
    try {
        std::vector<uint64_t> big(kMaxPayload + 1);
        net.try_push(0, 1, 0, big.data(), kMaxPayload + 1);
        FAIL() << "an over-long payload was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("at most 127 payload words, got 128"), std::string::npos) << e.what();
    }
}

TYPED_TEST(NetworkContract, ABlockedPushResumesWhenTheReceiverPops) {
    TypeParam net(shape(2, 1, 8));
    const uint64_t payload[3] = {7, 8, 9};
    ASSERT_TRUE(net.try_push(0, 1, 0, payload, 3));
    ASSERT_TRUE(net.try_push(0, 1, 0, payload, 3));  // 8 of 8 words
    std::atomic<bool> pushed{false};
    std::thread sender([&] {
        net.push(0, 1, 0, payload, 3, sleepy_policy());
        pushed.store(true);
    });
    std::this_thread::sleep_for(30ms);  // let it park
    EXPECT_FALSE(pushed.load());
    const auto t0 = std::chrono::steady_clock::now();
    MessageHeader h;
    uint64_t out[kMaxPayload];
    ASSERT_TRUE(net.try_pop(1, net.catch_all(), h, out));
    sender.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_EQ(net.counters(1, net.catch_all()).stalls, 1u);  // once per push that waited
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(net.try_pop(1, net.catch_all(), h, out));
    EXPECT_EQ(out[2], 9u);
}

TYPED_TEST(NetworkContract, ABlockedPopResumesWhenAMessageArrives) {
    TypeParam net(shape(2, 1));
    MessageHeader h;
    uint64_t out[kMaxPayload] = {};
    std::thread receiver([&] { net.pop(1, 0, h, out, sleepy_policy()); });
    std::this_thread::sleep_for(30ms);
    const auto t0 = std::chrono::steady_clock::now();
    net.bind_tag(1, 5, 0);
    const uint64_t w = 99;
    net.push(0, 1, 5, &w, 1);
    receiver.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_EQ(h.tag, 5);
    EXPECT_EQ(out[0], 99u);
}

// Many sender tiles push messages of random lengths into one small queue at once, more
// threads than CPUs; every payload word names its sender, message and position, so a torn
// or interleaved message shows, and so does a lost, duplicated or reordered one.
TYPED_TEST(NetworkContract, MessagesFromManyConcurrentSendersNeverInterleave) {
    constexpr uint32_t kSenders = 8, kMessages = 1500;
    TypeParam net(shape(kSenders + 1, 1));
    std::vector<std::thread> senders;
    for (uint32_t s = 1; s <= kSenders; ++s)
        senders.emplace_back([&, s] {
            uint64_t words[kMaxPayload];
            uint64_t rng = s * 0x9e3779b97f4a7c15ull;
            for (uint64_t m = 0; m < kMessages; ++m) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                const auto len = static_cast<uint32_t>(1 + rng % kMaxPayload);
                for (uint32_t i = 0; i < len; ++i) words[i] = (uint64_t{s} << 48) | (m << 16) | i;
                net.push(s, 0, static_cast<Tag>(len), words, len);
            }
        });
    std::vector<uint64_t> next(kSenders + 1, 0);
    uint64_t torn = 0, out_of_order = 0;
    MessageHeader h;
    uint64_t out[kMaxPayload];
    for (uint64_t n = 0; n < uint64_t{kSenders} * kMessages; ++n) {
        net.pop(0, net.catch_all(), h, out);  // the tags (= lengths) are unbound
        torn += h.tag != h.length;
        for (uint32_t i = 0; i < h.length; ++i)
            torn += out[i] != ((uint64_t{h.source} << 48) | (next[h.source] << 16) | i);
        out_of_order += (out[0] >> 16 & 0xffffffffu) != next[h.source];
        next[h.source] = (out[0] >> 16 & 0xffffffffu) + 1;
    }
    for (auto& t : senders) t.join();
    EXPECT_EQ(torn, 0u);
    EXPECT_EQ(out_of_order, 0u);
    for (uint32_t s = 1; s <= kSenders; ++s) EXPECT_EQ(next[s], kMessages) << "sender " << s;
    EXPECT_FALSE(net.try_pop(0, net.catch_all(), h, out));
    EXPECT_EQ(net.counters(0, net.catch_all()).messages, uint64_t{kSenders} * kMessages);
}

TYPED_TEST(NetworkContract, AClaimedQueueTakesPushesFromItsSenderOnly) {
    TypeParam net(shape(3, 2));
    net.claim(2, 0, 1);
    EXPECT_THROW(net.claim(2, 0, 0), std::invalid_argument);
    EXPECT_THROW(net.claim(2, 0, 1), std::invalid_argument);  // one interface per queue
    net.bind_tag(2, 4, 0);
    const uint64_t w = 1;
    EXPECT_TRUE(net.try_push(1, 2, 4, &w, 1));
    EXPECT_THROW(net.try_push(0, 2, 4, &w, 1), std::logic_error);
    EXPECT_THROW(net.try_push_credited(net.route(0, 1, 4), &w, 1), std::logic_error);  // not claimed
    net.release_claim(2, 0);
    EXPECT_TRUE(net.try_push(0, 2, 4, &w, 1));
}

// ---- Credit-based interfaces ----------------------------------------------------------------

template <typename Net>
class CreditContract : public testing::Test {};
TYPED_TEST_SUITE(CreditContract, Backends, BackendNames);

TYPED_TEST(CreditContract, TwoInterfacesCannotOwnOneQueue) {
    TypeParam net(shape(2));
    CreditChannelConfig c;
    CreditChannel<TypeParam> first(net, c);
    c.data_tag = 5;  // bound to the same data queue 0 at tile 1
    c.ack_tag = 6;
    c.ack_queue = 1;
    try {
        CreditChannel<TypeParam> second(net, c);
        FAIL() << "two channels own tile 1's queue 0";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("tile 1's queue 0 is claimed already"), std::string::npos) << e.what();
    }
}

TYPED_TEST(CreditContract, CreditExhaustionBlocksTheSenderUntilTheReceiverReturnsOne) {
    TypeParam net(shape(2));
    CreditChannelConfig c;
    c.credits = 4;
    CreditChannel<TypeParam> ch(net, c);
    for (uint64_t v = 0; v < 4; ++v) ASSERT_TRUE(ch.sender().try_send(&v));
    const uint64_t five = 4;
    EXPECT_FALSE(ch.sender().try_send(&five));  // no credit left
    EXPECT_EQ(net.queued_words(1, 0), 8u);      // 4 messages of header + word
    std::atomic<bool> sent{false};
    std::thread sender([&] {
        ch.sender().send(&five, sleepy_policy());
        sent.store(true);
    });
    std::this_thread::sleep_for(30ms);
    EXPECT_FALSE(sent.load());
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t v;
    TileId source;
    ASSERT_TRUE(ch.receiver().try_recv(&v, source));  // returns a credit
    sender.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(source, 0u);
    for (uint64_t want = 1; want <= 4; ++want) {
        ASSERT_TRUE(ch.receiver().try_recv(&v, source));
        EXPECT_EQ(v, want);
    }
    EXPECT_FALSE(ch.receiver().try_recv(&v, source));
}

TYPED_TEST(CreditContract, MoreCreditsThanTheQueueHoldsAreRejectedWithTheBound) {
    TypeParam net(shape(2));
    CreditChannelConfig c;
    c.credits = 65;
    try {
        CreditChannel<TypeParam> ch(net, c);
        FAIL() << "K = 65 accepted for 128-word queues";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("needs 130 words in tile 1's queue 0, which holds 128 (K <= 128/2 = 64)"),
                  std::string::npos)
            << e.what();
    }
    c.credits = 64;
    CreditChannel<TypeParam> ok(net, c);  // the failed attempt gave everything back
    c.credits = 0;
    EXPECT_THROW(CreditChannel<TypeParam>(net, c), std::invalid_argument);
}

TYPED_TEST(CreditContract, AsymmetricCreditsOverTheBoundOf128Over2NAreRejected) {
    TypeParam net(shape(17, 1));
    AsymmetricCreditConfig c;
    c.receiver = 0;
    for (TileId s = 1; s <= 16; ++s) c.senders.push_back(s);
    c.credits = 5;
    try {
        AsymmetricCreditChannel<TypeParam> ch(net, c);
        FAIL() << "K = 5 accepted for 16 senders";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("16 senders x K = 5 credits x (1 + 1) words needs 160 words in tile 0's "
                                             "queue 0, which holds 128 (K <= 128/(2N) = 4)"),
                  std::string::npos)
            << e.what();
    }
    c.credits = 4;
    AsymmetricCreditChannel<TypeParam> ok(net, c);
    EXPECT_EQ(ok.senders(), 16u);
}

// The many-to-one interface's senders share the receiver's queue and all spend credits, so
// each push reserves its words with one fetch_add and no room check. A push without a credit
// would take room their credits stand for: it is refused, as is a claim of the queue by one
// sender; other credit interfaces may share it. Each claim goes with its interface.
TYPED_TEST(CreditContract, ASharedReceiveQueueTakesOnlyCreditedPushes) {
    TypeParam net(shape(4, 1));
    AsymmetricCreditConfig c;
    c.receiver = 0;
    c.senders = {1, 2, 3};
    c.credits = 4;
    const uint64_t stray = 99;
    {
        AsymmetricCreditChannel<TypeParam> ch(net, c);
        try {
            net.try_push(2, 0, c.data_tag, &stray, 1);
            FAIL() << "a push without a credit went into the shared queue";
        } catch (const std::logic_error& e) {
            EXPECT_NE(std::string(e.what()).find("tile 2 pushed without a credit into tile 0's queue 0, which credit "
                                                 "interfaces share"),
                      std::string::npos)
                << e.what();
        }
        try {
            net.claim(0, c.data_queue, 1);
            FAIL() << "one sender claimed a queue credit interfaces share";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("tile 0's queue 0 is claimed already (shared by credit interfaces)"),
                      std::string::npos)
                << e.what();
        }
        net.claim_credited(0, c.data_queue);  // a second interface shares it, and goes again
        net.release_claim(0, c.data_queue);
        EXPECT_THROW(net.try_push(3, 0, c.data_tag, &stray, 1), std::logic_error) << "the channel's claim holds";
        for (uint32_t i = 0; i < 3; ++i) {
            const uint64_t v = 10 + i;
            ASSERT_TRUE(ch.sender(i).try_send(&v));
        }
        uint64_t got = 0, v;
        uint32_t from;
        while (ch.try_recv(&v, from)) got += v - 10 == from;
        EXPECT_EQ(got, 3u);
    }
    net.claim(0, c.data_queue, 1);  // nobody claims it now
    net.release_claim(0, c.data_queue);
    c.data_queue = net.catch_all();  // takes every unbound tag: never the interface's own
    try {
        AsymmetricCreditChannel<TypeParam> ch(net, c);
        FAIL() << "the catch-all made the data queue";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("data queue 1 is not one of the receiver's 1 queues"), std::string::npos)
            << e.what();
    }
}

// The many-to-one interface: senders on their own threads, more threads than CPUs; the
// receiver learns each message's sender from the message itself.
TYPED_TEST(CreditContract, TheAsymmetricReceiverGetsEverySendersMessagesInTheirOrder) {
    constexpr uint32_t kSenders = 6;
    constexpr uint64_t kPerSender = 3000;
    NetworkConfig nc = shape(kSenders + 1, 1);
    TypeParam net(nc);
    AsymmetricCreditConfig c;
    for (TileId s = 1; s <= kSenders; ++s) c.senders.push_back(s);
    c.credits = 8;  // 6 x 8 x 2 = 96 <= 128
    AsymmetricCreditChannel<TypeParam> ch(net, c);
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < kSenders; ++i)
        threads.emplace_back([&, i] {
            for (uint64_t m = 0; m < kPerSender; ++m) {
                const uint64_t w = (uint64_t{i} << 32) | m;
                ch.sender(i).send(&w);
            }
        });
    std::vector<uint64_t> next(kSenders, 0);
    uint64_t wrong = 0;
    for (uint64_t n = 0; n < kSenders * kPerSender; ++n) {
        uint64_t w;
        TileId source;
        ch.receiver().recv(&w, source);
        const uint32_t from = source - 1;
        wrong += (w >> 32) != from || (w & 0xffffffffu) != next[from]++;
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong, 0u);
    uint64_t w;
    uint32_t from;
    EXPECT_FALSE(ch.try_recv(&w, from));
}

// A tile with one queue has more incoming interfaces than queues: six logical channels from
// three sender tiles share it (and each sender's one queue carries its two channels'
// credits). Receiving the channels in the reverse of the send order makes the demux set
// messages aside for their own channel.
TYPED_TEST(CreditContract, LogicalChannelsShareOnePhysicalQueueAndEachKeepsItsOrder) {
    constexpr uint32_t kChannels = 6, kSenderTiles = 3, kRounds = 50;
    TypeParam net(shape(kSenderTiles + 1, 1));
    QueueDemux<TypeParam> data(net, 0, 0);
    std::vector<std::unique_ptr<QueueDemux<TypeParam>>> acks;
    for (TileId t = 1; t <= kSenderTiles; ++t) acks.push_back(std::make_unique<QueueDemux<TypeParam>>(net, t, 0));
    std::vector<std::unique_ptr<LogicalChannel<TypeParam>>> chans;
    for (uint32_t i = 0; i < kChannels; ++i) {
        LogicalChannelConfig c;
        c.data_tag = static_cast<Tag>(100 + i);
        c.ack_tag = static_cast<Tag>(200 + i);
        c.credits = 4;  // 6 x 4 x (1 + 2) = 72 words of the receiver's 128
        c.payload_words = 2;
        chans.push_back(std::make_unique<LogicalChannel<TypeParam>>(data, *acks[i % kSenderTiles], c));
    }
    MessageHeader h;
    uint64_t w[2], out[2];
    TileId source;
    for (uint64_t r = 0; r < kRounds; ++r) {
        for (uint32_t i = 0; i < kChannels; ++i) {
            w[0] = i;
            w[1] = r;
            ASSERT_TRUE(chans[i]->sender().try_send(w)) << i << " " << r;
        }
        for (uint32_t i = kChannels; i-- > 0;) {
            ASSERT_TRUE(chans[i]->receiver().try_recv(out, source)) << i << " " << r;
            EXPECT_EQ(out[0], i);
            EXPECT_EQ(out[1], r);
            EXPECT_EQ(source, 1 + i % kSenderTiles);
        }
    }
    EXPECT_GT(data.set_aside(), 0u);
    EXPECT_EQ(data.unclaimed(), 0u);
    // A tag nobody attached is kept, not lost.
    net.bind_tag(0, 999, 0);
    const uint64_t stray = 5;
    ASSERT_TRUE(net.try_push(1, 0, 999, &stray, 1));
    uint64_t payload[kMaxPayload];
    EXPECT_FALSE(data.try_pop(0, h, payload));
    ASSERT_TRUE(data.try_pop_unclaimed(h, payload));
    EXPECT_EQ(h.tag, 999);
    EXPECT_EQ(payload[0], 5u);
}

TYPED_TEST(CreditContract, LogicalChannelsOnOneQueueMustTogetherFitIt) {
    TypeParam net(shape(2, 1));
    QueueDemux<TypeParam> data(net, 1, 0), acks(net, 0, 0);
    LogicalChannelConfig c;
    c.credits = 32;  // 32 x 2 = 64 words
    LogicalChannel<TypeParam> first(data, acks, c);
    c.data_tag = 3;
    c.ack_tag = 4;
    LogicalChannel<TypeParam> second(data, acks, c);  // 128 of 128
    c.data_tag = 5;
    c.ack_tag = 6;
    c.credits = 1;
    try {
        LogicalChannel<TypeParam> third(data, acks, c);
        FAIL() << "a third channel fitted a full queue";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("has 128 set aside for other interfaces already"), std::string::npos)
            << e.what();
    }
}

TYPED_TEST(CreditContract, TheUdnTransportRunsOnASharedNetworkBesideOtherTraffic) {
    TypeParam net(shape(3, 2));
    CreditChannelConfig c;
    c.sender = 2;
    c.receiver = 0;
    c.data_queue = 1;
    c.ack_queue = 1;
    c.data_tag = 10;
    c.ack_tag = 11;
    c.credits = 16;
    c.payload_words = 2;
    UdnChannel<PacketDesc, TypeParam> ch(net, c);
    EXPECT_EQ(ch.capacity(), 16u);
    const uint64_t other = 77;
    ASSERT_TRUE(net.try_push(1, 0, 3, &other, 1));  // lands in tile 0's catch-all, not in the channel
    std::thread sender([&] {
        for (uint64_t v = 0; v < 2000; ++v) {
            PacketDesc d{};
            d.flow_hash = static_cast<uint32_t>(v);
            d.length = static_cast<uint16_t>(v);
            send(ch, d);
        }
        ch.close();
    });
    uint64_t expected = 0, wrong = 0;
    PacketDesc d;
    while (recv(ch, d)) wrong += d.flow_hash != expected || d.length != static_cast<uint16_t>(expected), ++expected;
    sender.join();
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(expected, 2000u);
    MessageHeader h;
    uint64_t payload[kMaxPayload];
    ASSERT_TRUE(net.try_pop(0, net.catch_all(), h, payload));
    EXPECT_EQ(payload[0], 77u);
    c.payload_words = 1;  // a PacketDesc needs 2
    c.data_tag = 20;
    c.ack_tag = 21;
    EXPECT_THROW((UdnChannel<PacketDesc, TypeParam>(net, c)), std::invalid_argument);
}

// ---- Backend-specific ----------------------------------------------------------------------

TEST(CreditInterface, AReceiveReturnsWhatItTookFromASenderInOneCreditMessage) {
    // A burst of 32 from one sender costs it one credit message back, not 32: the sender's
    // ack queue carries the grant and one return.
    MessageNetwork net(shape(2, 1, 256));
    CreditChannelConfig c;
    c.sender = 0;
    c.receiver = 1;
    c.credits = 64;
    c.payload_words = 1;
    CreditChannel<MessageNetwork> link(net, c);
    uint64_t words[32];
    for (uint64_t i = 0; i < 32; ++i) words[i] = i;
    ASSERT_EQ(link.sender().try_send_many(words, 32), 32u);
    uint64_t got[32] = {};
    ASSERT_EQ(link.receiver().try_recv_burst(got, 32), 32u);
    for (uint64_t i = 0; i < 32; ++i) EXPECT_EQ(got[i], i);
    // Spend every credit: the sender must take the 32 returned ones, which came as one message.
    std::vector<uint64_t> more(64, 7);
    EXPECT_EQ(link.sender().try_send_many(more.data(), 64), 64u);
    EXPECT_EQ(net.counters(0, 0).messages, 2u) << "the grant of K, then one return of 32";
    EXPECT_EQ(link.sender().try_send_many(more.data(), 1), 0u) << "K = 64 in flight: no credit left";
}

TEST(EventdevNetwork, MoreTilesAndQueuesThanTheDeviceHasPortsAreRejected) {
    try {
        EventdevNetwork net(shape(13, 4));  // 13 x 5 = 65 ports
        FAIL() << "65 event ports accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("= 65 event ports, but event_sw offers 64"), std::string::npos) << e.what();
    }
    EventdevNetwork fits(shape(12, 4));  // the failed one gave its device back
    EXPECT_EQ(fits.tiles(), 12u);
}

TEST(MessageNetwork, ATopologyGivesTheNetworkItsTiles) {
    const NetworkConfig c = NetworkConfig::for_topology(Topology::preset("tilepro64"));
    EXPECT_EQ(c.tiles, 64u);
    EXPECT_EQ(c.queues, 4u);
    EXPECT_EQ(c.queue_words, 128u);
    EXPECT_EQ(MessageNetwork(c).config().max_payload, 127u);
}

}  // namespace
}  // namespace tp::noc
