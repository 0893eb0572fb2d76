// The ping-pong harness of `bench pingpong`, shared with `bench asym` so that both time the
// same way: two pinned threads, the ping side timing every round trip with the TSC
// (one-way = round trip / 2), statistics kept in registers, a CPU pause between attempts.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

#include "apps/bench/harness.hpp"
#include "apps/bench/queues.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

struct OneWay {  // one measurement, in TSC ticks
    double avg = 0, std = 0, max = 0;
    uint64_t errors = 0;
};

// Runs `pong(i)` on cpu_b and times `ping(i)` on cpu_a, for warm-up + iters rounds.
template <typename Ping, typename Pong>
OneWay measure(const Common& c, uint64_t iters, Ping&& ping, Pong&& pong) {
    const uint64_t warmup = iters / 10 + 100;
    std::atomic<int> ready{0};
    auto start = [&] {
        ready.fetch_add(1);  // seq_cst: a start line, off the measured path
        while (ready.load() != 2) cpu_pause();
    };
    std::thread echo([&] {
        pin(c.cpu_b);
        start();
        for (uint64_t i = 0; i < warmup + iters; ++i) pong(i);
    });
    // Statistics kept in registers: a sample array would stream through the cache and
    // evict the channels' slot lines between laps.
    double sum = 0, sq = 0, mx = 0;
    OneWay r;
    std::thread timer([&] {
        pin(c.cpu_a);
        start();
        for (uint64_t i = 0; i < warmup; ++i) r.errors += !ping(i);
        double s1 = 0, s2 = 0, m = 0;
        uint64_t errors = 0;
        for (uint64_t i = 0; i < iters; ++i) {
            const uint64_t t0 = ticks();
            errors += !ping(warmup + i);
            const double one_way = static_cast<double>(ticks() - t0) / 2;
            s1 += one_way;
            s2 += one_way * one_way;
            m = one_way > m ? one_way : m;
        }
        sum = s1, sq = s2, mx = m;
        r.errors += errors;
    });
    timer.join();
    echo.join();
    r.avg = sum / static_cast<double>(iters);
    r.std = std::sqrt(std::max(0.0, sq / static_cast<double>(iters) - r.avg * r.avg));
    r.max = mx;
    return r;
}

inline OneWay measure_raw(const Common& c, uint64_t iters) {
    // 128-byte spacing: the two lines never share an adjacent-line prefetch pair.
    struct alignas(128) Line {
        std::atomic<uint64_t> v{~0ull};
    };
    Line there, back;
    return measure(
        c, iters,
        [&](uint64_t i) {
            there.v.store(i, std::memory_order_release);  // release/acquire: the word is the message
            while (back.v.load(std::memory_order_acquire) != i) cpu_pause();
            return true;
        },
        [&](uint64_t i) {
            while (there.v.load(std::memory_order_acquire) != i) cpu_pause();
            back.v.store(i, std::memory_order_release);
        });
}

// The one-word ping-pong over two queues of transport `name` (K slots each), called through
// their concrete types: bench pingpong's rows, and bench asym's symmetric row.
inline OneWay measure_transport(const Common& c, const std::string& name, uint64_t iters, uint32_t capacity) {
    OneWay r;
    visit_queue<uint64_t>(name, [&]<typename Q>(std::type_identity<Q>) {
        Q there(capacity), back(capacity);
        r = measure(
            c, iters,
            [&](uint64_t i) {
                while (!there.try_send(i)) cpu_pause();
                uint64_t v;
                while (!back.try_recv(v)) cpu_pause();
                return v == i;
            },
            [&](uint64_t) {
                uint64_t v;
                while (!there.try_recv(v)) cpu_pause();
                while (!back.try_send(v)) cpu_pause();
            });
    });
    return r;
}

}  // namespace tp::bench
