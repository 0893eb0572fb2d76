#include "framework/metrics/latency_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace tp {

LatencyHistogram::LatencyHistogram() : counts_(std::make_unique<std::atomic<uint64_t>[]>(kBuckets)) {
    clear();
}

LatencyHistogram& LatencyHistogram::operator=(LatencyHistogram&& o) noexcept {
    counts_ = std::move(o.counts_);
    samples_.store(o.samples(), std::memory_order_relaxed);
    sum_.store(o.sum_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    max_.store(o.max(), std::memory_order_relaxed);
    return *this;
}

void LatencyHistogram::clear() {
    for (size_t i = 0; i < kBuckets; ++i) counts_[i].store(0, std::memory_order_relaxed);
    samples_.store(0, std::memory_order_relaxed);
    sum_.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < kBuckets; ++i)
        if (const uint64_t c = other.count(i)) add(counts_[i], c);
    add(samples_, other.samples());
    add(sum_, other.sum_.load(std::memory_order_relaxed));
    if (other.max() > max()) max_.store(other.max(), std::memory_order_relaxed);
}

double LatencyHistogram::mean() const {
    const uint64_t n = samples();
    return n == 0 ? 0.0 : double(sum_.load(std::memory_order_relaxed)) / double(n);
}

uint64_t LatencyHistogram::lower(size_t bucket) {
    if (bucket < kSub) return bucket;
    const unsigned shift = static_cast<unsigned>(bucket / kSub) - 1;
    return (kSub + bucket % kSub) << shift;
}

uint64_t LatencyHistogram::width(size_t bucket) {
    return bucket < kSub ? 1 : uint64_t(1) << (bucket / kSub - 1);
}

uint64_t LatencyHistogram::percentile(double q) const {
    const uint64_t n = samples();
    if (n == 0) return 0;
    const double want = std::ceil(std::clamp(q, 0.0, 1.0) * double(n));
    const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(want), 1, n);
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
        seen += count(i);
        if (seen >= rank) return std::min(lower(i) + (width(i) - 1) / 2, max());
    }
    return max();  // a live histogram whose buckets lag its sample count
}

}  // namespace tp
