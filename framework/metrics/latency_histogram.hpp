// LatencyHistogram: a log-linear histogram of durations in TSC ticks, fixed memory, at most
// 0.4% relative error on any percentile.
//
// Values below 128 have a bucket each; each power of two above, [2^e, 2^(e+1)), is split into
// 128 equal buckets, so a bucket is never wider than 1/128 of its lower bound, and the middle
// of a bucket is within 1/256 of any value in it. 7424 buckets cover every uint64_t (58 KiB,
// allocated once by the constructor; record() never allocates).
//
// Concurrency: one writer (the tile that owns the histogram) calls record(); counters are
// relaxed atomics written with a plain load + store (no lock prefix on x86), so another thread
// may read a live histogram (merge into its own copy, percentile) and sees a slightly stale,
// never torn, view. The runtime keeps one histogram per sink tile and merges them after the
// threads have joined, so the hot path shares nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace tp {

class LatencyHistogram {
public:
    static constexpr unsigned kSubBits = 7;
    static constexpr uint64_t kSub = uint64_t(1) << kSubBits;  // buckets per power of two
    static constexpr size_t kBuckets = (64 - kSubBits + 1) * kSub;

    LatencyHistogram();
    // Moves are for handing a merged copy around (not while another thread records into it);
    // a moved-from histogram may only be destroyed or assigned to.
    LatencyHistogram(LatencyHistogram&& o) noexcept { *this = std::move(o); }
    LatencyHistogram& operator=(LatencyHistogram&& o) noexcept;

    // One sample of `ticks`, or `times` samples of the same value.
    void record(uint64_t ticks, uint64_t times = 1) {
        add(counts_[bucket_of(ticks)], times);
        add(samples_, times);
        add(sum_, ticks * times);
        if (ticks > max_.load(std::memory_order_relaxed)) max_.store(ticks, std::memory_order_relaxed);
    }
    // Adds every sample of `other` (which may be live: see above).
    void merge(const LatencyHistogram& other);
    void clear();

    uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }
    uint64_t max() const { return max_.load(std::memory_order_relaxed); }
    double mean() const;
    // The value at quantile q in [0, 1] (the sample of rank ceil(q x samples)), as the middle
    // of its bucket, capped by max(); 0 with no samples.
    uint64_t percentile(double q) const;

    // Buckets, for a CDF: bucket i holds values in [lower(i), lower(i) + width(i)).
    uint64_t count(size_t bucket) const { return counts_[bucket].load(std::memory_order_relaxed); }
    static uint64_t lower(size_t bucket);
    static uint64_t width(size_t bucket);
    static size_t bucket_of(uint64_t ticks) {
        if (ticks < kSub) return static_cast<size_t>(ticks);
        const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(ticks));  // >= kSubBits
        const unsigned shift = e - kSubBits;
        return static_cast<size_t>((shift + 1) * kSub + ((ticks >> shift) - kSub));
    }

private:
    static void add(std::atomic<uint64_t>& c, uint64_t n) {
        c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    std::unique_ptr<std::atomic<uint64_t>[]> counts_;
    std::atomic<uint64_t> samples_{0};
    std::atomic<uint64_t> sum_{0};
    std::atomic<uint64_t> max_{0};
};

}  // namespace tp
