// LatencyReport: the latency part of a RunReport, in microseconds, and how it prints.
//
// end_to_end: from the source's stamp (the TSC right after the packet was produced) to the
// sink having handled it, over the samples the rule took (LatencyConfig), merged from every
// sink. nodes (`latency: all` only): per graph node, the queue wait before it took a packet
// and the time it then worked on the packet's burst. TSC ticks become time with
// rte_get_tsc_hz(), passed in as `tsc_hz`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/metrics/latency_histogram.hpp"

namespace tp {

struct LatencySummary {
    double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;  // microseconds
    uint64_t samples = 0;

    static LatencySummary of(const LatencyHistogram& h, double tsc_hz);
};

// One non-empty bucket: values below `upper_us` (and at or above the previous one's).
struct LatencyBucket {
    double upper_us = 0;
    uint64_t count = 0;
};

struct NodeResidenceReport {
    std::string node;
    LatencySummary queue_wait;
    LatencySummary process;
};

struct LatencyReport {
    std::string mode = "off";  // LatencyConfig::str()
    double tsc_hz = 0;         // the TSC rate the samples were taken at
    LatencySummary end_to_end;
    std::vector<LatencyBucket> buckets;  // end_to_end's histogram, for a CDF
    std::vector<NodeResidenceReport> nodes;
};

std::vector<LatencyBucket> latency_buckets(const LatencyHistogram& h, double tsc_hz);

// Adds the samples of `other` (another process's sinks) to `into`: the end-to-end histogram is
// rebuilt from both reports' buckets (exact where both ran at one TSC rate, to a bucket's width
// otherwise), the mean and max merge exactly, and `other`'s nodes join `into`'s.
void merge_latency(LatencyReport& into, const LatencyReport& other);

// {p50, p90, p99, p999, max, mean, samples} in µs, and with buckets, [[upper_us, count], ...].
nlohmann::json latency_json(const LatencySummary& s);
nlohmann::json latency_json(const LatencyHistogram& h, double tsc_hz);  // with buckets

// Table lines ("" when latency is off).
std::string format_latency(const LatencyReport& r);
// Adds `latency_us` to a report's JSON, and per node `queue_wait_us`/`process_us` to the
// `tiles` entry of that node.
void add_latency_json(nlohmann::json& report, const LatencyReport& r);

}  // namespace tp
