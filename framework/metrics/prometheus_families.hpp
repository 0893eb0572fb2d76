// The Prometheus metric families of a running app (`tilepipe run --metrics`), built from a
// LiveView: the same relaxed reads of the tiles' counters that the telemetry endpoints and the
// interval lines use (live_view.hpp), so a scrape never makes a tile wait.
//
// Every series carries `app`. Families (units in the names, counters end in `_total`):
//   run:   tilepipe_run_info{version,topology,latency} (1), tilepipe_run_finished (0/1),
//          tilepipe_run_seconds (the timed window so far)
//   totals: tilepipe_offered_packets_total, tilepipe_offered_bytes_total (what the sources
//          emitted), tilepipe_delivered_packets_total, tilepipe_delivered_bytes_total (what the
//          sinks took), tilepipe_dropped_packets_total, tilepipe_source_lost_packets_total
//   per stage instance {node,stage,kind,tile,cpu[,worker]}:
//          tilepipe_node_packets_total{direction="in"|"out"}, tilepipe_node_bytes_total (out),
//          tilepipe_node_dropped_packets_total{reason}, tilepipe_node_cycles_total,
//          tilepipe_node_cycles_per_packet, tilepipe_node_busy_ratio (its tile's share of the
//          timed window), tilepipe_node_busy_seconds_total (rate() of it: the recent share)
//   per tile (graph node, emitters and collectors too) {node,role,tile,cpu[,worker]}:
//          tilepipe_tile_packets_total (taken from its inputs), tilepipe_tile_busy_ratio,
//          tilepipe_tile_busy_seconds_total
//   per link {from,to,transport}: tilepipe_link_capacity_items, tilepipe_link_queued_items
//          (left out where the transport cannot tell)
//   per edge of the app's graph {from,output,to} (`l3.ipv4 -> route`; not a farm's or map's
//          inner links): tilepipe_edge_packets_total, tilepipe_edge_bytes_total
//   latency (not with `latency: off`): tilepipe_latency_seconds (histogram, kLatencyBounds),
//          tilepipe_latency_p50_seconds, _p90_, _p99_, _p999_, tilepipe_latency_max_seconds
//   pools {pool}: tilepipe_pool_mbufs, tilepipe_pool_available_mbufs
// `rank` joins the labels once an app spans ranks.
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "framework/metrics/live_view.hpp"

namespace tp {

// The histogram's `le` bounds in seconds: 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500 us, 1, 2, 5,
// 10, 100 ms (and +Inf).
extern const std::vector<double> kLatencyBounds;

// Folds the log-linear buckets (LatencyReport::buckets, ascending, microseconds) into
// cumulative counts per kLatencyBounds entry, +Inf last: a bucket counts under the first bound
// at or above its upper edge, so no sample is put below its value and none more than 1/128 of
// its value above it.
std::vector<prometheus::ClientMetric::Bucket> fold_latency(const std::vector<LatencyBucket>& buckets);

// Every family above for the run `v` shows; `version` is tilepipe's.
std::vector<prometheus::MetricFamily> prometheus_families(const LiveView& v, const std::string& version);

}  // namespace tp
