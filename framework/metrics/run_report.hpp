// RunReport: what a run did, as a human table and as JSON (`--json OUT`).
//
// `packets`/`bytes` count what the sources emitted; every one of those packets is accounted
// for by a sink's `out`, some stage's `drops` or a failed node's in-flight drops (`unaccounted`
// is the difference, 0 in a correct run). `lost_before_source` counts what devices received
// but never handed to a source (no mbuf, missed, errors): delivered + dropped + lost before
// source is what the devices saw. gbps_l2 = frame bytes x 8 / s; gbps_l1 adds 24 B per packet (preamble, IFG,
// FCS) as a line-rate figure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/metrics/latency_report.hpp"
#include "framework/metrics/port_tx.hpp"

namespace tp {

struct StageReport {
    std::string name;
    std::string stage;
    std::string kind;
    int cpu = -1;
    int tile_x = 0, tile_y = 0;
    uint64_t in = 0, out = 0, drops = 0, bytes = 0, cycles = 0;
    uint64_t lost_before = 0;  // sources: packets their device lost before handing them over
    double busy = 0;  // fraction of the run spent inside the stage (vs. polling, waiting)
    std::map<std::string, uint64_t> drop_reasons;
    std::map<std::string, uint64_t> events;
    // Sinks that send by the descriptor's port: what each port's device or file received
    // (empty for every other stage).
    std::vector<PortTx> ports;

    double cycles_per_packet() const;
};

// A graph node on its tile: the fraction of the run its thread spent in polls of it that moved
// work (the rest is polling empty inputs, waiting for room, or other tiles' turns).
struct TileReport {
    std::string node;
    int tile_x = 0, tile_y = 0;
    int cpu = -1;
    double busy = 0;
};

struct ChannelReport {
    std::string from, to, transport;
    uint32_t capacity = 0;
    int hops = 0;
};

struct PoolReport {
    std::string name;
    uint64_t capacity = 0;
    uint64_t available = 0;
};

// A node whose tile caught an exception: the run stopped early because of it.
struct FailureReport {
    std::string node;
    std::string error;
    uint64_t dropped = 0;  // packets in flight in the node when it failed or reaching it after
};

struct RunReport {
    std::string app;
    uint64_t packets = 0;
    uint64_t bytes = 0;
    double seconds = 0;
    uint64_t drops = 0;
    uint64_t delivered = 0;  // sum of sinks' out
    int64_t unaccounted = 0; // packets - delivered - drops
    uint64_t lost_before_source = 0;  // sum of the sources' lost_before
    std::string topology;
    size_t threads = 0;
    std::vector<StageReport> stages;
    std::vector<TileReport> tiles;
    std::vector<ChannelReport> channels;
    std::vector<PoolReport> pools;
    std::vector<FailureReport> failures;  // empty in a run that did not fail
    LatencyReport latency;

    double mpps() const;
    double gbps_l2() const;
    double gbps_l1() const;
    bool pools_full() const;
};

std::string format_table(const RunReport& r);
nlohmann::json to_json(const RunReport& r);

}  // namespace tp
