// Messaging network stress, on both backends, with threads outnumbering CPUs:
//  - raw messages: many sender tiles push messages of random lengths into one small queue
//    (and some into another queue of the same tile) with blocking and non-blocking pushes;
//  - the many-to-one credit interface: many senders, one receiver, small K;
//  - logical channels: several tiles' channels multiplexed on one queue.
// The receivers check that every message arrives exactly once, whole, in its sender's order.
//
// Messages per test: $TILEPIPE_STRESS_ITEMS / 20 when set, else the meson option
// `stress_items` / 20 (a message here is up to 127 words, a channel item one); the event
// device, a software scheduler, moves a tenth of that. A few minutes in all on 2 CPUs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "framework/noc/asymmetric_credit_channel.hpp"
#include "framework/noc/eventdev_network.hpp"
#include "framework/noc/logical_channel.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/noc/queue_demux.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "tests/support/stress_items.hpp"

#ifndef TILEPIPE_STRESS_ITEMS_DEFAULT
#define TILEPIPE_STRESS_ITEMS_DEFAULT 20000000
#endif

namespace tp::noc {
namespace {

template <typename Net>
uint64_t stress_messages() {
    const uint64_t items = test::stress_items(TILEPIPE_STRESS_ITEMS_DEFAULT);
    const uint64_t n = items / 20;
    return std::max<uint64_t>(1000, std::is_same_v<Net, EventdevNetwork> ? n / 10 : n);
}

uint32_t cpus() { return static_cast<uint32_t>(allowed_cpus().size()); }

struct XorShift {
    uint64_t s;
    uint32_t next(uint32_t bound) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return static_cast<uint32_t>(s % bound);
    }
};

// Payload word i of message m from sender s.
uint64_t word(TileId s, uint64_t m, uint32_t i) { return (uint64_t{s} << 52) ^ (m << 8) ^ i; }

uint64_t number_of(uint64_t word0) { return (word0 >> 8) & ((uint64_t{1} << 44) - 1); }

// Per-sender bookkeeping of a receiver: numbers must rise strictly (no duplicate, no
// reordering), the counts tell whether anything was lost, every word is checked.
struct Ledger {
    explicit Ledger(uint32_t tiles) : next(tiles, 0), count(tiles, 0) {}
    std::vector<uint64_t> next;   // per sender: one past the last number seen
    std::vector<uint64_t> count;  // per sender: messages seen
    uint64_t received = 0, torn = 0, out_of_order = 0;

    void check(const MessageHeader& h, const uint64_t* payload, uint64_t number) {
        ++received;
        ++count[h.source];
        out_of_order += number < next[h.source];
        next[h.source] = number + 1;
        for (uint32_t i = 0; i < h.length; ++i) torn += payload[i] != word(h.source, number, i);
    }
};

template <typename Net>
class NetworkStress : public testing::Test {};
using Backends = testing::Types<MessageNetwork, EventdevNetwork>;
struct BackendNames {
    template <typename Net>
    static std::string GetName(int) {
        return Net::kBackend;
    }
};
TYPED_TEST_SUITE(NetworkStress, Backends, BackendNames);

// Senders = 2 x CPUs + 2 tiles push into tile 0: tag 1 goes to queue 0, every other tag to
// the catch-all; two receiver threads pop one queue each.
TYPED_TEST(NetworkStress, RawMessagesFromManySendersArriveWholeOnceAndInOrder) {
    const uint32_t senders = 2 * cpus() + 2;
    NetworkConfig c;
    c.tiles = senders + 1;
    c.queues = 1;
    TypeParam net(c);
    net.bind_tag(0, 1, 0);
    const uint64_t per_sender = stress_messages<TypeParam>() / senders;
    std::vector<std::thread> threads;
    for (TileId s = 1; s <= senders; ++s)
        threads.emplace_back([&, s] {
            XorShift rng{0x9e3779b97f4a7c15ull * s};
            uint64_t payload[kMaxPayload];
            for (uint64_t m = 0; m < per_sender; ++m) {
                const Tag tag = (m % 3 == 0) ? 2 : 1;  // a third to the catch-all
                const uint32_t len = 1 + rng.next(m % 16 == 0 ? kMaxPayload : 8);
                for (uint32_t i = 0; i < len; ++i) payload[i] = word(s, m, i);
                if (m % 2 == 0) {
                    net.push(s, 0, tag, payload, len);
                } else {
                    while (!net.try_push(s, 0, tag, payload, len)) std::this_thread::yield();
                }
            }
        });
    // The catch-all's receiver: a second thread for the same tile; each queue has one
    // popping thread (tile 0 pushes nothing, so on the event device its port is this one's).
    Ledger catch_all(c.tiles), queue0(c.tiles);
    const uint64_t to_catch_all = senders * ((per_sender + 2) / 3);
    std::thread other([&] {
        MessageHeader h;
        uint64_t payload[kMaxPayload];
        for (uint64_t n = 0; n < to_catch_all; ++n) {
            net.pop(0, net.catch_all(), h, payload);
            catch_all.check(h, payload, number_of(payload[0]));
        }
    });
    MessageHeader h;
    uint64_t payload[kMaxPayload];
    for (uint64_t n = 0; n < senders * per_sender - to_catch_all; ++n) {
        net.pop(0, 0, h, payload);
        queue0.check(h, payload, number_of(payload[0]));
    }
    other.join();
    for (auto& t : threads) t.join();
    EXPECT_EQ(queue0.torn + catch_all.torn, 0u);
    EXPECT_EQ(queue0.out_of_order + catch_all.out_of_order, 0u);
    for (TileId s = 1; s <= senders; ++s) {
        EXPECT_EQ(catch_all.count[s], (per_sender + 2) / 3) << "sender " << s;
        EXPECT_EQ(queue0.count[s] + catch_all.count[s], per_sender) << "sender " << s;
    }
    EXPECT_FALSE(net.try_pop(0, 0, h, payload));
    EXPECT_FALSE(net.try_pop(0, net.catch_all(), h, payload));
}

TYPED_TEST(NetworkStress, TheAsymmetricInterfaceLosesAndDuplicatesNothing) {
    const uint32_t senders = 2 * cpus() + 2;
    NetworkConfig c;
    c.tiles = senders + 1;
    c.queues = 1;
    TypeParam net(c);
    AsymmetricCreditConfig ac;
    for (TileId s = 1; s <= senders; ++s) ac.senders.push_back(s);
    ac.credits = c.queue_words / (2 * senders);  // the bound: K <= 128/(2N)
    AsymmetricCreditChannel<TypeParam> ch(net, ac);
    const uint64_t per_sender = stress_messages<TypeParam>() / senders;
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < senders; ++i)
        threads.emplace_back([&, i] {
            for (uint64_t m = 0; m < per_sender; ++m) {
                const uint64_t w = word(i + 1, m, 0);
                if (m % 2 == 0) ch.sender(i).send(&w);
                else
                    while (!ch.sender(i).try_send(&w)) std::this_thread::yield();
            }
        });
    Ledger ledger(c.tiles);
    for (uint64_t n = 0; n < senders * per_sender; ++n) {
        uint64_t w;
        TileId source;
        ch.receiver().recv(&w, source);
        const MessageHeader h{source, ac.data_tag, 1};
        ledger.check(h, &w, number_of(w));
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ledger.torn, 0u);
    EXPECT_EQ(ledger.out_of_order, 0u);
    for (TileId s = 1; s <= senders; ++s) EXPECT_EQ(ledger.count[s], per_sender) << "sender " << s;
}

// Each of 2 x CPUs + 1 sender tiles has two logical channels into tile 0's one queue; the
// receiver serves the channels round-robin, so messages are set aside all the time.
TYPED_TEST(NetworkStress, LogicalChannelsOnOneQueueLoseAndDuplicateNothing) {
    const uint32_t sender_tiles = 2 * cpus() + 1, per_tile = 2, channels = sender_tiles * per_tile;
    NetworkConfig c;
    c.tiles = sender_tiles + 1;
    c.queues = 1;
    c.queue_words = 256;
    TypeParam net(c);
    QueueDemux<TypeParam> data(net, 0, 0);
    std::vector<std::unique_ptr<QueueDemux<TypeParam>>> acks;
    for (TileId t = 1; t <= sender_tiles; ++t) acks.push_back(std::make_unique<QueueDemux<TypeParam>>(net, t, 0));
    std::vector<std::unique_ptr<LogicalChannel<TypeParam>>> chans;
    for (uint32_t i = 0; i < channels; ++i) {
        LogicalChannelConfig lc;
        lc.data_tag = static_cast<Tag>(10 + i);
        lc.ack_tag = static_cast<Tag>(1000 + i);
        lc.credits = c.queue_words / (2 * channels);
        chans.push_back(std::make_unique<LogicalChannel<TypeParam>>(data, *acks[i / per_tile], lc));
    }
    const uint64_t per_channel = stress_messages<TypeParam>() / channels;
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < sender_tiles; ++t)
        threads.emplace_back([&, t] {  // one thread drives both channels of its tile
            for (uint64_t m = 0; m < per_channel; ++m)
                for (uint32_t k = 0; k < per_tile; ++k) {
                    const uint32_t i = t * per_tile + k;
                    const uint64_t w = word(i, m, 0);
                    chans[i]->sender().send(&w);
                }
        });
    std::vector<uint64_t> next(channels, 0);
    uint64_t wrong = 0, left = channels * per_channel;
    while (left != 0) {
        bool progress = false;
        for (uint32_t i = 0; i < channels; ++i) {
            uint64_t w;
            TileId source;
            if (next[i] == per_channel || !chans[i]->receiver().try_recv(&w, source)) continue;
            wrong += w != word(i, next[i]++, 0) || source != 1 + i / per_tile;
            --left;
            progress = true;
        }
        if (!progress) std::this_thread::yield();  // more threads than CPUs: let the senders run
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(data.unclaimed(), 0u);
}

}  // namespace
}  // namespace tp::noc
