#include "framework/metrics/latency_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace tp {

LatencySummary LatencySummary::of(const LatencyHistogram& h, double tsc_hz) {
    const double us = tsc_hz > 0 ? 1e6 / tsc_hz : 0.0;
    LatencySummary s;
    s.samples = h.samples();
    s.p50 = double(h.percentile(0.50)) * us;
    s.p90 = double(h.percentile(0.90)) * us;
    s.p99 = double(h.percentile(0.99)) * us;
    s.p999 = double(h.percentile(0.999)) * us;
    s.max = double(h.max()) * us;
    s.mean = h.mean() * us;
    return s;
}

std::vector<LatencyBucket> latency_buckets(const LatencyHistogram& h, double tsc_hz) {
    const double us = tsc_hz > 0 ? 1e6 / tsc_hz : 0.0;
    std::vector<LatencyBucket> v;
    for (size_t i = 0; i < LatencyHistogram::kBuckets; ++i)
        if (const uint64_t c = h.count(i))
            v.push_back({double(LatencyHistogram::lower(i) + LatencyHistogram::width(i)) * us, c});
    return v;
}

void merge_latency(LatencyReport& into, const LatencyReport& other) {
    const double hz = into.tsc_hz;
    LatencyHistogram h;
    for (const LatencyReport* r : {static_cast<const LatencyReport*>(&into), &other})
        for (const LatencyBucket& b : r->buckets) {
            // One tick below the bucket's upper bound: in that same bucket at the same rate.
            const auto upper = static_cast<uint64_t>(std::llround(b.upper_us * hz / 1e6));
            h.record(upper > 0 ? upper - 1 : 0, b.count);
        }
    const LatencySummary& a = into.end_to_end;
    const LatencySummary& b = other.end_to_end;
    LatencySummary m = LatencySummary::of(h, hz);
    m.max = std::max(a.max, b.max);
    m.mean = m.samples != 0 ? (a.mean * double(a.samples) + b.mean * double(b.samples)) / double(m.samples) : 0.0;
    for (double* p : {&m.p50, &m.p90, &m.p99, &m.p999}) *p = std::min(*p, m.max);
    into.end_to_end = m;
    into.buckets = latency_buckets(h, hz);
    into.nodes.insert(into.nodes.end(), other.nodes.begin(), other.nodes.end());
}

nlohmann::json latency_json(const LatencySummary& s) {
    return {{"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"p999", s.p999},
            {"max", s.max}, {"mean", s.mean}, {"samples", s.samples}};
}

namespace {
nlohmann::json buckets_json(const std::vector<LatencyBucket>& buckets) {
    nlohmann::json b = nlohmann::json::array();
    for (const LatencyBucket& x : buckets) b.push_back({x.upper_us, x.count});
    return b;
}
}  // namespace

nlohmann::json latency_json(const LatencyHistogram& h, double tsc_hz) {
    nlohmann::json j = latency_json(LatencySummary::of(h, tsc_hz));
    j["buckets"] = buckets_json(latency_buckets(h, tsc_hz));
    return j;
}

std::string format_latency(const LatencyReport& r) {
    if (r.mode == "off") return "";
    const LatencySummary& e = r.end_to_end;
    char line[320];
    // An empty run, or one whose packets were all dropped: no percentiles to print, not zeros.
    if (e.samples == 0) return "latency us (" + r.mode + ", 0 samples): none, no packet reached a sink\n";
    std::snprintf(line, sizeof line,
                  "latency us (%s, %llu samples): p50 %.2f, p90 %.2f, p99 %.2f, p999 %.2f, max %.2f, mean %.2f\n",
                  r.mode.c_str(), (unsigned long long)e.samples, e.p50, e.p90, e.p99, e.p999, e.max, e.mean);
    std::string s = line;
    for (const NodeResidenceReport& n : r.nodes) {
        // A source's node has no input channel: nothing waited there.
        if (n.queue_wait.samples == 0)
            std::snprintf(line, sizeof line, "    %-16s queue wait -; process p50 %.2f, p99 %.2f\n", n.node.c_str(),
                          n.process.p50, n.process.p99);
        else
            std::snprintf(line, sizeof line, "    %-16s queue wait p50 %.2f, p99 %.2f; process p50 %.2f, p99 %.2f\n",
                          n.node.c_str(), n.queue_wait.p50, n.queue_wait.p99, n.process.p50, n.process.p99);
        s += line;
    }
    return s;
}

void add_latency_json(nlohmann::json& report, const LatencyReport& r) {
    nlohmann::json l = latency_json(r.end_to_end);
    l["mode"] = r.mode;
    l["buckets"] = buckets_json(r.buckets);
    report["latency_us"] = std::move(l);
    if (!report.contains("tiles")) return;
    for (const NodeResidenceReport& n : r.nodes)
        for (auto& t : report["tiles"])
            if (t.value("node", "") == n.node) {
                t["queue_wait_us"] = {{"p50", n.queue_wait.p50}, {"p99", n.queue_wait.p99}};
                t["process_us"] = {{"p50", n.process.p50}, {"p99", n.process.p99}};
            }
}

}  // namespace tp
