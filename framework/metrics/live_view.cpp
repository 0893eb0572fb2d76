#include "framework/metrics/live_view.hpp"

#include <algorithm>
#include <cmath>

namespace tp {

namespace {
// busy_fraction = cycles / (seconds * tsc_hz), so busy_fraction * seconds is the busy time: the interval's
// share is the difference of those over the interval's length.
double busy_between(double busy_now, double s_now, double busy_before, double s_before) {
    const double dt = s_now - s_before;
    if (dt <= 0) return 0.0;
    const double share = (busy_now * s_now - busy_before * s_before) / dt;
    return share < 0 ? 0.0 : share;
}

uint64_t minus(uint64_t now, uint64_t before) { return now >= before ? now - before : 0; }

// The summary of the samples in `buckets` (ascending): each percentile, and the max, is the
// upper bound of the bucket its sample falls in (within 1/128 of the value), the mean is taken
// over those bounds.
LatencySummary summary_of(const std::vector<LatencyBucket>& buckets) {
    LatencySummary s;
    double sum = 0;
    for (const LatencyBucket& b : buckets) s.samples += b.count, sum += b.upper_us * double(b.count);
    if (s.samples == 0) return s;
    s.mean = sum / double(s.samples);
    s.max = buckets.back().upper_us;
    const auto at = [&](double q) {
        const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * double(s.samples))));
        uint64_t seen = 0;
        for (const LatencyBucket& b : buckets)
            if ((seen += b.count) >= rank) return b.upper_us;
        return s.max;
    };
    s.p50 = at(0.50), s.p90 = at(0.90), s.p99 = at(0.99), s.p999 = at(0.999);
    return s;
}
}  // namespace

LatencyReport latency_delta(const LatencyReport& now, const LatencyReport& before) {
    LatencyReport d;
    d.mode = now.mode;
    // Both lists hold the non-empty buckets of one histogram layout, ascending, with bounds
    // computed alike: a bucket of `before` has its equal in `now`.
    size_t j = 0;
    for (const LatencyBucket& b : now.buckets) {
        while (j < before.buckets.size() && before.buckets[j].upper_us < b.upper_us) ++j;
        const uint64_t had = j < before.buckets.size() && before.buckets[j].upper_us == b.upper_us ? before.buckets[j].count : 0;
        if (b.count > had) d.buckets.push_back({b.upper_us, b.count - had});
    }
    d.end_to_end = summary_of(d.buckets);
    return d;
}

RunReport report_delta(const RunReport& now, const RunReport& before) {
    RunReport d = now;
    d.seconds = now.seconds - before.seconds;
    d.offered_seconds = now.offered_seconds - before.offered_seconds;
    d.setup_s = 0;
    d.delivered_bytes = minus(now.delivered_bytes, before.delivered_bytes);
    d.packets = minus(now.packets, before.packets);
    d.bytes = minus(now.bytes, before.bytes);
    d.drops = minus(now.drops, before.drops);
    d.delivered = minus(now.delivered, before.delivered);
    d.lost_before_source = minus(now.lost_before_source, before.lost_before_source);
    d.unaccounted = 0;
    // Both views come from one run: the same stages and tiles in the same order.
    for (size_t i = 0; i < d.stages.size() && i < before.stages.size(); ++i) {
        StageReport& s = d.stages[i];
        const StageReport& b = before.stages[i];
        s.in = minus(s.in, b.in);
        s.out = minus(s.out, b.out);
        s.drops = minus(s.drops, b.drops);
        s.bytes = minus(s.bytes, b.bytes);
        s.cycles = minus(s.cycles, b.cycles);
        s.lost_before = minus(s.lost_before, b.lost_before);
        s.busy_fraction = busy_between(s.busy_fraction, now.seconds, b.busy_fraction, before.seconds);
        for (auto& [reason, n] : s.drop_reasons)
            if (auto it = b.drop_reasons.find(reason); it != b.drop_reasons.end()) n = minus(n, it->second);
        for (auto& [event, n] : s.events)
            if (auto it = b.events.find(event); it != b.events.end()) n = minus(n, it->second);
    }
    d.latency = latency_delta(now.latency, before.latency);
    for (size_t i = 0; i < d.tiles.size() && i < before.tiles.size(); ++i) {
        TileReport& t = d.tiles[i];
        const TileReport& b = before.tiles[i];
        t.busy_fraction = busy_between(t.busy_fraction, now.seconds, b.busy_fraction, before.seconds);
        t.packets = minus(t.packets, b.packets);
        t.bytes = minus(t.bytes, b.bytes);
    }
    return d;
}

}  // namespace tp
