// Channel stress: for every transport, one sender and many senders (asymmetric) push
// sequence-numbered items through small channels with the blocking operations, mixing single
// items and bursts of random lengths, while threads outnumber CPUs. The receiver checks that
// every item arrives exactly once, in its sender's order, and that none is lost.
//
// Items in total per test: $TILEPIPE_STRESS_ITEMS when set, else the meson option
// `stress_items` (tens of millions by default); PacketDesc runs move a quarter of that. A value
// that is not a positive decimal number fails every test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/packet_desc.hpp"
#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/doorbell.hpp"
#include "tests/support/stress_items.hpp"

#ifndef TILEPIPE_STRESS_ITEMS_DEFAULT
#define TILEPIPE_STRESS_ITEMS_DEFAULT 20000000
#endif

namespace tp {
namespace {

uint64_t stress_items() { return test::stress_items(TILEPIPE_STRESS_ITEMS_DEFAULT); }

unsigned cpus() { return static_cast<unsigned>(allowed_cpus().size()); }

// An item names its sender and its number; a PacketDesc also carries a checksum of both.
struct Tag {
    uint32_t sender;
    uint64_t seq;
    bool intact;
};
template <typename T>
T encode(uint32_t sender, uint64_t seq);
template <>
uint64_t encode<uint64_t>(uint32_t sender, uint64_t seq) { return (uint64_t{sender} << 48) | seq; }
template <>
PacketDesc encode<PacketDesc>(uint32_t sender, uint64_t seq) {
    PacketDesc d{};
    d.mbuf = reinterpret_cast<rte_mbuf*>(static_cast<uintptr_t>((uint64_t{sender} << 48) | seq));
    d.flow_hash = static_cast<uint32_t>(seq * 2654435761u) ^ sender;
    d.length = static_cast<uint16_t>(seq);
    d.port = static_cast<uint8_t>(sender);
    d.type = static_cast<uint8_t>(seq >> 16);
    return d;
}
Tag decode(uint64_t w) { return {static_cast<uint32_t>(w >> 48), w & ((1ull << 48) - 1), true}; }
Tag decode(const PacketDesc& d) {
    Tag t = decode(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(d.mbuf)));
    t.intact = d.flow_hash == (static_cast<uint32_t>(t.seq * 2654435761u) ^ t.sender) &&
               d.length == static_cast<uint16_t>(t.seq) && d.port == static_cast<uint8_t>(t.sender) &&
               d.type == static_cast<uint8_t>(t.seq >> 16);
    return t;
}

// Cheap per-thread random burst lengths.
struct XorShift {
    uint64_t s;
    uint32_t next(uint32_t bound) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return static_cast<uint32_t>(s % bound);
    }
};

template <typename T, typename Tx>
void produce(Tx& tx, uint32_t sender, uint64_t count) {
    XorShift rng{0x9e3779b97f4a7c15ull + sender};
    T burst[32];
    for (uint64_t seq = 0; seq < count;) {
        const uint32_t want = 1 + rng.next(32);
        if (want <= 4) {
            send(tx, encode<T>(sender, seq++));
            continue;
        }
        uint32_t n = 0;
        while (n < want && seq < count) burst[n++] = encode<T>(sender, seq++);
        send_burst(tx, burst, n);
    }
    tx.close();
}

struct Verdict {
    uint64_t received = 0;
    uint64_t out_of_order = 0;  // duplicates, gaps and reorderings all show here
    uint64_t corrupt = 0;
    std::vector<uint64_t> next;  // per sender: the next number expected
};

template <typename T, typename Rx>
Verdict consume(Rx& rx, uint32_t senders) {
    Verdict v;
    v.next.assign(senders, 0);
    XorShift rng{42};
    T burst[32];
    for (;;) {
        const uint32_t want = 1 + rng.next(32);
        const uint32_t n = want <= 4 ? (recv(rx, burst[0]) ? 1u : 0u) : recv_burst(rx, burst, want);
        if (n == 0) break;
        for (uint32_t i = 0; i < n; ++i) {
            const Tag t = decode(burst[i]);
            if (!t.intact || t.sender >= senders) {
                ++v.corrupt;
                continue;
            }
            v.out_of_order += t.seq != v.next[t.sender];
            v.next[t.sender] = t.seq + 1;
        }
        v.received += n;
    }
    return v;
}

// Threads that take the CPU away at random moments, so senders and receivers get preempted
// in the middle of their operations even in the one-sender runs.
class Noise {
public:
    explicit Noise(unsigned threads) {
        for (unsigned i = 0; i < threads; ++i)
            threads_.emplace_back([this] {
                while (!stop_.load(std::memory_order_relaxed)) {  // relaxed: a flag polled until set
                    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
                    while (std::chrono::steady_clock::now() < until) {
                    }
                    std::this_thread::sleep_for(std::chrono::microseconds(150));
                }
            });
    }
    ~Noise() {
        stop_.store(true, std::memory_order_relaxed);
        for (auto& t : threads_) t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

struct StressCase {
    std::string transport;
    bool many_senders;
};

class ChannelStress : public testing::TestWithParam<StressCase> {
protected:
    template <typename T>
    void run(uint64_t total) {
        const StressCase& c = GetParam();
        if (c.many_senders) run_asymmetric<T>(c.transport, total);
        else run_one_to_one<T>(c.transport, total);
    }

    template <typename T>
    void run_one_to_one(const std::string& transport, uint64_t total) {
        auto ch = make_channel<T>(ChannelSpec{transport, 128, -1});
        Doorbell tx_bell, rx_bell;
        ch->set_bells(&tx_bell, &rx_bell);
        Noise noise(cpus());  // sender + receiver + noise > CPUs
        std::thread sender([&] { produce<T>(*ch, 0, total); });
        const Verdict v = consume<T>(*ch, 1);
        sender.join();
        check(v, {total});
    }

    template <typename T>
    void run_asymmetric(const std::string& transport, uint64_t total) {
        const uint32_t senders = 2 * cpus() + 2;  // senders + receiver > 2 x CPUs
        AsymmetricReceiver<T> rx(ChannelSpec{transport, 64, -1}, senders);
        Doorbell rx_bell;
        std::vector<Doorbell> tx_bells(senders);
        rx.set_receiver_bell(&rx_bell);
        std::vector<uint64_t> counts(senders, total / senders);
        counts[0] += total % senders;
        std::vector<std::thread> threads;
        for (uint32_t s = 0; s < senders; ++s) {
            rx.sender(s).set_bells(&tx_bells[s], &rx_bell);
            threads.emplace_back([&, s] { produce<T>(rx.sender(s), s, counts[s]); });
        }
        const Verdict v = consume<T>(rx, senders);
        for (auto& t : threads) t.join();
        check(v, counts);
    }

    static void check(const Verdict& v, const std::vector<uint64_t>& sent) {
        uint64_t total = 0;
        for (uint64_t n : sent) total += n;
        ASSERT_GT(total, 0u) << "a run that sends nothing tests nothing";
        EXPECT_EQ(v.corrupt, 0u);
        EXPECT_EQ(v.out_of_order, 0u);
        EXPECT_EQ(v.received, total);
        for (size_t s = 0; s < sent.size(); ++s) EXPECT_EQ(v.next[s], sent[s]) << "sender " << s << " lost items";
    }
};

TEST_P(ChannelStress, WordsArriveExactlyOnceInSenderOrder) { run<uint64_t>(stress_items()); }

TEST_P(ChannelStress, DescriptorsArriveExactlyOnceInSenderOrder) { run<PacketDesc>(std::max<uint64_t>(1, stress_items() / 4)); }

std::vector<StressCase> all_cases() {
    std::vector<StressCase> cases;
    for (const auto& t : transport_names()) {
        cases.push_back({t, false});
        cases.push_back({t, true});
    }
    return cases;
}

INSTANTIATE_TEST_SUITE_P(Transports, ChannelStress, testing::ValuesIn(all_cases()), [](const auto& info) {
    return info.param.transport + (info.param.many_senders ? "_ManySenders" : "_OneSender");
});

}  // namespace
}  // namespace tp
