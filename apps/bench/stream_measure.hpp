// One `bench stream` measurement: items numbered 0..N-1 streamed from one pinned thread to
// another through a queue Q (a transport or a peer's queue behind the same try_* calls), one
// at a time or in bursts. Both sides poll with a CPU pause after a failed attempt; the receiver
// checks every item's number, so nothing is optimised away and a broken queue fails the bench.
// In a header so that a bench program built beside a peer library (tilepipe-bench, FastFlow)
// measures that peer's queue with the same loop.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "apps/bench/harness.hpp"
#include "descriptors/packet_desc.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

struct StreamResult {
    double mmsgs = 0;     // millions of items a second, first send to last receive
    uint64_t errors = 0;  // items that arrived out of order
};

template <typename T>
T stream_item(uint64_t v) {
    if constexpr (std::is_same_v<T, PacketDesc>) {
        PacketDesc d{};
        d.mbuf = reinterpret_cast<rte_mbuf*>(static_cast<uintptr_t>(v));
        d.flow_hash = static_cast<uint32_t>(v);
        return d;
    } else {
        return v;
    }
}
template <typename T>
uint64_t stream_number(const T& v) {
    if constexpr (std::is_same_v<T, PacketDesc>) return reinterpret_cast<uintptr_t>(v.mbuf);
    else return v;
}

template <typename T, typename Q>
StreamResult measure_stream(int cpu_a, int cpu_b, uint64_t items, uint32_t burst, uint32_t capacity) {
    Q q(capacity);
    std::atomic<int> ready{0};
    auto start = [&] {
        ready.fetch_add(1);  // seq_cst: a start line, off the measured path
        while (ready.load() != 2) cpu_pause();
    };
    std::chrono::steady_clock::time_point t0, t1;
    StreamResult r;
    std::thread producer([&] {
        pin(cpu_a);
        start();
        t0 = std::chrono::steady_clock::now();
        T buf[32];
        for (uint64_t seq = 0; seq < items;) {
            if (burst == 1) {
                const T v = stream_item<T>(seq);
                while (!q.try_send(v)) cpu_pause();
                ++seq;
                continue;
            }
            const auto want = static_cast<uint32_t>(std::min<uint64_t>(burst, items - seq));
            for (uint32_t k = 0; k < want; ++k) buf[k] = stream_item<T>(seq + k);
            for (uint32_t sent = 0; sent < want;) {
                const uint32_t m = q.try_send_burst(buf + sent, want - sent);
                if (m == 0) cpu_pause();
                sent += m;
            }
            seq += want;
        }
    });
    std::thread consumer([&] {
        pin(cpu_b);
        start();
        T buf[32];
        uint64_t expected = 0, errors = 0;
        while (expected < items) {
            const uint32_t n = burst == 1 ? (q.try_recv(buf[0]) ? 1u : 0u) : q.try_recv_burst(buf, burst);
            if (n == 0) {
                cpu_pause();
                continue;
            }
            for (uint32_t k = 0; k < n; ++k) errors += stream_number(buf[k]) != expected++;
        }
        t1 = std::chrono::steady_clock::now();
        r.errors = errors;
    });
    producer.join();
    consumer.join();
    r.mmsgs = static_cast<double>(items) / std::chrono::duration<double, std::micro>(t1 - t0).count();
    return r;
}

// A peer's queue measured by a bench program that links it (peer_channels.hpp): 64-bit words.
using WordStreamMeasure = StreamResult (*)(int cpu_a, int cpu_b, uint64_t items, uint32_t burst, uint32_t capacity);

// FastFlow's SWSR buffer (`tilepipe-bench` built beside FastFlow's headers); nullptr when absent.
WordStreamMeasure& fastflow_stream();

}  // namespace tp::bench
