// LiveTelemetry: a running app's counters through DPDK's telemetry socket
// (`<EAL runtime dir>/dpdk_telemetry.v2`, read with `dpdk-telemetry.py -f PREFIX`).
//
// Endpoints, registered with rte_telemetry once per process and answered from whichever run
// is published at the time (none: `"state": "idle"` and empty lists):
//   /tilepipe/stats           app, state (idle, starting, running, done), seconds, packets,
//                             bytes, delivered, drops, lost_before_source, pps, mpps,
//                             gbps_l2, gbps_l1 (totals so far, rates over the run so far),
//                             pool_mbufs, pool_available (the app's pool now)
//   /tilepipe/nodes           one entry per stage instance in each of the arrays name, stage,
//                             in, out, drops, bytes, busy
//   /tilepipe/nodes,NAME      the same fields for one node as a dict (null: no such node)
//   /tilepipe/tiles           arrays node, x, y, cpu, busy: one entry per graph node's tile
//   /tilepipe/channels        arrays from, to, transport, capacity, hops, queued (items in
//                             the channel now; -1 where the transport cannot tell)
//   /tilepipe/latency         mode, samples, p50_us, p90_us, p99_us, p999_us, max_us, mean_us:
//                             end-to-end latency over the samples taken so far
// DPDK 22.11's telemetry values are integers and strings only, and a dict holds no dicts: so
// lists come as parallel arrays (one per field) and fractional values (seconds, rates,
// busy shares) as decimal strings.
//
// Threads: DPDK calls the handlers on its own telemetry thread. A handler builds a LiveView
// from the tiles' counters with relaxed atomic loads (see live_view.hpp): no tile takes a
// lock or waits for it. The mutex here guards only which run is published: a handler holds it
// while it reads, so the destructor, which unpublishes, returns only once no handler is still
// reading the run.
#pragma once

#include "framework/metrics/live_view.hpp"

namespace tp {

class LiveTelemetry {
public:
    // Publishes `source` as the run the endpoints answer for (registering them on first use);
    // the latest one made is published until it is destroyed.
    explicit LiveTelemetry(LiveSource source);
    ~LiveTelemetry();
    LiveTelemetry(const LiveTelemetry&) = delete;
    LiveTelemetry& operator=(const LiveTelemetry&) = delete;

private:
    const LiveSource source_;
};

// The endpoints' names, in registration order (for `tilepipe` docs and tests).
inline constexpr const char* kTelemetryEndpoints[] = {"/tilepipe/stats", "/tilepipe/nodes", "/tilepipe/tiles",
                                                     "/tilepipe/channels", "/tilepipe/latency", "/tilepipe/edges"};

}  // namespace tp
