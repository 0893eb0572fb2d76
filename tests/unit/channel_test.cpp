// Channels: what a tile relies on from every transport (FIFO, burst prefixes, end of stream,
// blocking through the WaitPolicy, construction errors) and from the asymmetric receiver
// (fair round-robin selection, end of stream once every sender closed).
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/packet_desc.hpp"
#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp {
namespace {

// Items carry a number; a PacketDesc carries it in every field so a torn copy shows.
template <typename T>
T make_item(uint64_t v);
template <>
uint64_t make_item<uint64_t>(uint64_t v) { return v; }
template <>
PacketDesc make_item<PacketDesc>(uint64_t v) {
    PacketDesc d{};
    d.mbuf = reinterpret_cast<rte_mbuf*>(static_cast<uintptr_t>(v + 1));
    d.flow_hash = static_cast<uint32_t>(v * 2654435761u);
    d.length = static_cast<uint16_t>(v);
    d.port = static_cast<uint8_t>(v >> 16);
    d.type = static_cast<uint8_t>(v ^ 0x5a);
    return d;
}

uint64_t item_value(uint64_t w) { return w; }
uint64_t item_value(const PacketDesc& d) {
    const uint64_t v = reinterpret_cast<uintptr_t>(d.mbuf) - 1;
    const bool intact = d.flow_hash == static_cast<uint32_t>(v * 2654435761u) &&
                        d.length == static_cast<uint16_t>(v) && d.port == static_cast<uint8_t>(v >> 16) &&
                        d.type == static_cast<uint8_t>(v ^ 0x5a);
    return intact ? v : ~0ull;
}

// Runs `f.template operator()<T>()` for both element types.
template <typename F>
void for_each_element(F&& f) {
    f.template operator()<uint64_t>();
    f.template operator()<PacketDesc>();
}

// A policy whose park phase would sleep for ages: finishing quickly proves a wake-up came.
WaitPolicy sleepy_policy() {
    WaitPolicy p;
    p.spin_rounds = 4;
    p.yield_rounds = 2;
    p.park_timeout = std::chrono::seconds(30);
    return p;
}

class ChannelContract : public testing::TestWithParam<std::string> {
protected:
    template <typename T>
    std::unique_ptr<Channel<T>> make(uint32_t capacity) {
        return make_channel<T>(ChannelSpec{GetParam(), capacity, -1});
    }
};

TEST_P(ChannelContract, DeliversItemsOnceInSendOrderAndRefusesWhenFullOrEmpty) {
    for_each_element([&]<typename T>() {
        auto ch = make<T>(8);
        EXPECT_EQ(ch->capacity(), 8u);
        EXPECT_EQ(std::string(ch->transport()), GetParam());
        uint64_t next_in = 0, next_out = 0;
        for (int round = 0; round < 5; ++round) {  // several laps over the slots
            for (int i = 0; i < 8; ++i) ASSERT_TRUE(ch->try_send(make_item<T>(next_in++)));
            EXPECT_FALSE(ch->try_send(make_item<T>(999)));
            T out{};
            for (int i = 0; i < 8; ++i) {
                ASSERT_TRUE(ch->try_recv(out));
                EXPECT_EQ(item_value(out), next_out++);
            }
            EXPECT_FALSE(ch->try_recv(out));
        }
    });
}

TEST_P(ChannelContract, BurstsMoveTheLongestPrefixThatFits) {
    for_each_element([&]<typename T>() {
        auto ch = make<T>(8);
        std::vector<T> in;
        for (uint64_t v = 0; v < 12; ++v) in.push_back(make_item<T>(v));
        EXPECT_EQ(ch->try_send_burst(in.data(), 12), 8u);  // items 0..7
        EXPECT_EQ(ch->try_send_burst(in.data() + 8, 4), 0u);
        T out[32];
        ASSERT_EQ(ch->try_recv_burst(out, 5), 5u);
        for (uint64_t v = 0; v < 5; ++v) EXPECT_EQ(item_value(out[v]), v);
        EXPECT_EQ(ch->try_send_burst(in.data() + 8, 4), 4u);  // 3 left + 4 = 7 of 8
        ASSERT_EQ(ch->try_recv_burst(out, 32), 7u);
        for (uint64_t v = 0; v < 7; ++v) EXPECT_EQ(item_value(out[v]), v + 5);
        EXPECT_EQ(ch->try_recv_burst(out, 32), 0u);
    });
}

// Live telemetry reads a channel's fill from a third thread; transports whose queue state lives
// in the messaging network (udn) say they cannot tell.
TEST_P(ChannelContract, QueuedCountsWhatWasSentAndNotYetReceived) {
    for_each_element([&]<typename T>() {
        auto ch = make<T>(8);
        if (GetParam().rfind("udn", 0) == 0) {
            EXPECT_EQ(ch->queued(), -1);
            return;
        }
        EXPECT_EQ(ch->queued(), 0);
        T out[8];
        for (int round = 0; round < 3; ++round) {  // across laps over the slots
            for (uint64_t v = 0; v < 6; ++v) ASSERT_TRUE(ch->try_send(make_item<T>(v)));
            EXPECT_EQ(ch->queued(), 6);
            ASSERT_EQ(ch->try_recv_burst(out, 4), 4u);
            EXPECT_EQ(ch->queued(), 2);
            ASSERT_EQ(ch->try_recv_burst(out, 8), 2u);
            EXPECT_EQ(ch->queued(), 0);
        }
    });
}

TEST_P(ChannelContract, EndOfStreamComesAfterEveryItemSentBeforeClose) {
    for_each_element([&]<typename T>() {
        auto ch = make<T>(4);
        for (uint64_t v = 0; v < 3; ++v) ASSERT_TRUE(ch->try_send(make_item<T>(v)));
        EXPECT_FALSE(ch->closed());
        ch->close();
        EXPECT_TRUE(ch->closed());
        T out{};
        for (uint64_t v = 0; v < 3; ++v) {
            ASSERT_TRUE(recv(*ch, out));
            EXPECT_EQ(item_value(out), v);
        }
        EXPECT_FALSE(recv(*ch, out));
        T burst[4];
        EXPECT_EQ(recv_burst(*ch, burst, 4), 0u);
    });
}

TEST_P(ChannelContract, BlockingSendAndRecvMoveAStreamThroughASmallChannel) {
    for_each_element([&]<typename T>() {
        auto ch = make<T>(4);
        Doorbell tx_bell, rx_bell;
        ch->set_bells(&tx_bell, &rx_bell);
        constexpr uint64_t kItems = 100000;
        std::thread sender([&] {
            std::vector<T> burst;
            for (uint64_t v = 0; v < kItems;) {
                if (v % 3 == 0) {
                    send(*ch, make_item<T>(v++));
                } else {
                    burst.clear();
                    for (uint64_t k = 0; k < 7 && v < kItems; ++k) burst.push_back(make_item<T>(v++));
                    send_burst(*ch, burst.data(), static_cast<uint32_t>(burst.size()));
                }
            }
            ch->close();
        });
        uint64_t expected = 0, wrong = 0;
        T out[16];
        for (bool single = true;; single = !single) {
            const uint32_t n = single ? (recv(*ch, out[0]) ? 1u : 0u) : recv_burst(*ch, out, 16);
            if (n == 0) break;
            for (uint32_t i = 0; i < n; ++i) wrong += item_value(out[i]) != expected++;
        }
        sender.join();
        EXPECT_EQ(wrong, 0u);
        EXPECT_EQ(expected, kItems);
    });
}

TEST_P(ChannelContract, ParkedReceiverIsWokenBySendAndByClose) {
    auto ch = make<uint64_t>(4);
    Doorbell tx_bell, rx_bell;
    ch->set_bells(&tx_bell, &rx_bell);
    const WaitPolicy policy = sleepy_policy();
    std::atomic<int> stage{0};
    uint64_t got = 0;
    bool second = true;
    std::thread receiver([&] {
        recv(*ch, got, policy);
        stage.store(1);
        second = recv(*ch, got, policy);
        stage.store(2);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // let it park
    const auto t0 = std::chrono::steady_clock::now();
    send(*ch, uint64_t{42});
    while (stage.load() != 1) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ch->close();
    receiver.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    EXPECT_EQ(got, 42u);
    EXPECT_FALSE(second);
}

TEST_P(ChannelContract, ParkedSenderIsWokenWhenTheReceiverFreesRoom) {
    auto ch = make<uint64_t>(2);
    Doorbell tx_bell, rx_bell;
    ch->set_bells(&tx_bell, &rx_bell);
    const WaitPolicy policy = sleepy_policy();
    ASSERT_TRUE(ch->try_send(1));
    ASSERT_TRUE(ch->try_send(2));
    std::atomic<bool> sent{false};
    std::thread sender([&] {
        send(*ch, uint64_t{3}, policy);
        sent.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // let it park
    EXPECT_FALSE(sent.load());
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t out = 0;
    ASSERT_TRUE(ch->try_recv(out));
    sender.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    ASSERT_TRUE(ch->try_recv(out));
    ASSERT_TRUE(ch->try_recv(out));
    EXPECT_EQ(out, 3u);
}

TEST_P(ChannelContract, ZeroOrOversizedCapacityIsRejectedAtConstruction) {
    EXPECT_THROW(make<uint64_t>(0), std::invalid_argument);
    EXPECT_THROW(make<PacketDesc>(0), std::invalid_argument);
    EXPECT_THROW(make<uint64_t>((1u << 24) + 1), std::invalid_argument);
    try {
        make<uint64_t>(0);
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("capacity (K) must be at least 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(GetParam()), std::string::npos) << e.what();
    }
}

TEST_P(ChannelContract, CapacityMustBeAPowerOfTwoWhereTheTransportMasksIndices) {
    const bool needs_power_of_two = GetParam() == "ring" || GetParam() == "sm" || GetParam() == "sm_shared";
    if (needs_power_of_two) {
        EXPECT_THROW(make<uint64_t>(6), std::invalid_argument);
        try {
            make<uint64_t>(6);
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("power of two, got 6"), std::string::npos) << e.what();
        }
    } else {
        auto ch = make<uint64_t>(6);
        for (uint64_t v = 0; v < 6; ++v) EXPECT_TRUE(ch->try_send(v));
        EXPECT_FALSE(ch->try_send(6));
    }
    auto one = make<uint64_t>(1);  // K = 1 is the paper's synchronous-ish channel
    EXPECT_TRUE(one->try_send(7));
    EXPECT_FALSE(one->try_send(8));
}

INSTANTIATE_TEST_SUITE_P(Transports, ChannelContract, testing::ValuesIn(transport_names()),
                         [](const auto& info) { return info.param; });

TEST(ChannelFactory, ListsEveryTransportAndRejectsUnknownNames) {
    const std::vector<std::string> expected{"ring", "sm", "sm_shared", "dpdk", "lock", "udn", "udn_eventdev", "udn_pair"};
    EXPECT_EQ(transport_names(), expected);
    try {
        make_word_channel(ChannelSpec{"carrier_pigeon", 8, -1});
        FAIL() << "unknown transport accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("unknown transport 'carrier_pigeon' (known: ring, sm, sm_shared, dpdk, lock, udn, "
                                             "udn_eventdev, udn_pair)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(std::string(make_desc_channel(ChannelSpec{})->transport()), "ring");  // the default
}

// ---- Asymmetric: N senders, one receiver --------------------------------------------------

class AsymmetricContract : public testing::TestWithParam<std::string> {
protected:
    ChannelSpec spec(uint32_t capacity) const { return ChannelSpec{GetParam(), capacity, -1}; }
};

TEST_P(AsymmetricContract, SenderCountOfZeroOrOverTheLimitIsRejected) {
    EXPECT_THROW(AsymmetricReceiver<uint64_t>(spec(8), 0), std::invalid_argument);
    try {
        AsymmetricReceiver<uint64_t>(spec(8), AsymmetricReceiver<uint64_t>::kMaxSenders + 1);
        FAIL() << "too many senders accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("sender count must be between 1 and 256, got 257"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(AsymmetricReceiver<uint64_t>(spec(0), 2), std::invalid_argument);
}

TEST_P(AsymmetricContract, ScanStartsAfterTheLastServedSenderAndSkipsIdleOnes) {
    AsymmetricReceiver<uint64_t> rx(spec(8), 3);
    for (uint64_t v : {10, 11, 12}) ASSERT_TRUE(rx.sender(0).try_send(v));
    ASSERT_TRUE(rx.sender(2).try_send(20));
    std::vector<uint64_t> order;
    uint64_t out = 0;
    while (rx.try_recv(out)) order.push_back(out);
    EXPECT_EQ(order, (std::vector<uint64_t>{10, 20, 11, 12}));
    EXPECT_EQ(rx.last_served(), 0u);
}

// A stream from N always-ready senders: every sender's channel is refilled right after the
// receiver takes from it, so each scan finds every sender ready.
TEST_P(AsymmetricContract, AlwaysReadySendersGetEqualSharesOneItemAtATime) {
    constexpr uint32_t kSenders = 5, kReceives = 10000;
    AsymmetricReceiver<uint64_t> rx(spec(16), kSenders);
    std::vector<uint64_t> next(kSenders, 0);
    auto refill = [&](uint32_t s) {
        while (rx.sender(s).try_send((uint64_t{s} << 32) | next[s])) ++next[s];
    };
    for (uint32_t s = 0; s < kSenders; ++s) refill(s);
    std::vector<uint32_t> share(kSenders, 0);
    uint64_t out = 0;
    for (uint32_t i = 0; i < kReceives; ++i) {
        ASSERT_TRUE(rx.try_recv(out));
        const auto s = static_cast<uint32_t>(out >> 32);
        ++share[s];
        refill(s);
    }
    for (uint32_t s = 0; s < kSenders; ++s) EXPECT_EQ(share[s], kReceives / kSenders) << "sender " << s;
}

TEST_P(AsymmetricContract, AlwaysReadySendersGetEqualSharesInBursts) {
    constexpr uint32_t kSenders = 4, kBurst = 8, kBursts = 2001;
    AsymmetricReceiver<uint64_t> rx(spec(32), kSenders);
    auto refill = [&](uint32_t s) {
        while (rx.sender(s).try_send(s)) {
        }
    };
    for (uint32_t s = 0; s < kSenders; ++s) refill(s);
    std::vector<uint32_t> share(kSenders, 0);
    uint64_t out[kBurst];
    for (uint32_t b = 0; b < kBursts; ++b) {
        ASSERT_EQ(rx.try_recv_burst(out, kBurst), kBurst);
        for (uint64_t s : out) ++share[s];
        for (uint32_t s = 0; s < kSenders; ++s) refill(s);
    }
    // Round-robin over whole bursts: shares differ by at most one burst.
    for (uint32_t s = 0; s < kSenders; ++s) {
        EXPECT_GE(share[s], kBurst * (kBursts / kSenders)) << "sender " << s;
        EXPECT_LE(share[s], kBurst * (kBursts / kSenders + 1)) << "sender " << s;
    }
}

// The same measured with sender threads: each keeps its channel full with blocking sends;
// the receiver starts once all are full and counts the first items, during which no channel
// can run dry (each loses at most half its backlog), so the share must be exact.
TEST_P(AsymmetricContract, ConcurrentAlwaysReadySendersGetEqualShares) {
    constexpr uint32_t kSenders = 4, kCapacity = 64, kPerSender = 20000;
    constexpr uint32_t kMeasured = kSenders * kCapacity / 2;
    AsymmetricReceiver<uint64_t> rx(spec(kCapacity), kSenders);
    Doorbell rx_bell;
    std::vector<Doorbell> tx_bells(kSenders);
    rx.set_receiver_bell(&rx_bell);
    for (uint32_t s = 0; s < kSenders; ++s) rx.sender(s).set_bells(&tx_bells[s], &rx_bell);
    std::atomic<uint32_t> full{0};
    std::vector<std::thread> senders;
    for (uint32_t s = 0; s < kSenders; ++s) {
        senders.emplace_back([&, s] {
            for (uint64_t i = 0; i < kPerSender; ++i) {
                send(rx.sender(s), (uint64_t{s} << 32) | i);
                if (i + 1 == kCapacity) full.fetch_add(1);
            }
            rx.sender(s).close();
        });
    }
    while (full.load() != kSenders) std::this_thread::yield();
    std::vector<uint32_t> share(kSenders, 0);
    std::vector<uint64_t> next(kSenders, 0);
    uint64_t out = 0, received = 0, wrong = 0;
    while (recv(rx, out)) {
        const auto s = static_cast<uint32_t>(out >> 32);
        wrong += (out & 0xffffffffu) != next[s]++;
        if (received++ < kMeasured) ++share[s];
    }
    for (auto& t : senders) t.join();
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(received, uint64_t{kSenders} * kPerSender);
    for (uint32_t s = 0; s < kSenders; ++s) EXPECT_EQ(share[s], kMeasured / kSenders) << "sender " << s;
}

TEST_P(AsymmetricContract, EndOfStreamOnlyOnceEverySenderClosedAndAllIsDrained) {
    AsymmetricReceiver<PacketDesc> rx(spec(4), 3);
    ASSERT_TRUE(rx.sender(1).try_send(make_item<PacketDesc>(5)));
    rx.sender(0).close();
    rx.sender(1).close();
    EXPECT_FALSE(rx.closed());
    rx.sender(2).close();
    EXPECT_TRUE(rx.closed());
    PacketDesc out{};
    ASSERT_TRUE(recv(rx, out));
    EXPECT_EQ(item_value(out), 5u);
    EXPECT_FALSE(recv(rx, out));
}

// Makes this thread's later membarrier() calls fail with EPERM (a seccomp filter), as a
// sandbox that starts refusing them would; false when the filter cannot be installed.
bool refuse_membarrier() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

TEST(Doorbell, AMembarrierFailingAtRunTimeMakesRingLightFenceAgainAndIsSaidOnce) {
    // In a child process (the failure is for the rest of the process): a doorbell made light,
    // then membarrier refused, then two parks. Exit status: 0 when ring_light() fences again
    // (light() false) after the failures, 1 when it still goes without a fence, 4 when this
    // kernel has no private expedited membarrier, 5 when seccomp is not available.
    int err[2];
    ASSERT_EQ(pipe(err), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        dup2(err[1], STDERR_FILENO);
        Doorbell b;
        if (!b.make_light()) _exit(4);
        if (!refuse_membarrier()) _exit(5);
        for (int i = 0; i < 2; ++i) {
            b.prepare_park();  // its barrier fails
            b.cancel_park();
        }
        _exit(b.light() ? 1 : 0);
    }
    close(err[1]);
    std::string said;
    char buf[512];
    for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
    close(err[0]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << said;
    if (WEXITSTATUS(status) == 4) GTEST_SKIP() << "no private expedited membarrier on this kernel";
    if (WEXITSTATUS(status) == 5) GTEST_SKIP() << "cannot install a seccomp filter here";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "ring_light() still skips its fence after a failed membarrier";
    const std::string warning = "membarrier(PRIVATE_EXPEDITED) failed";
    const size_t at = said.find(warning);
    EXPECT_NE(at, std::string::npos) << said;
    EXPECT_EQ(said.find(warning, at + 1), std::string::npos) << "said more than once: " << said;
}

INSTANTIATE_TEST_SUITE_P(Transports, AsymmetricContract, testing::ValuesIn(transport_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tp
