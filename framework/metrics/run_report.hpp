// RunReport: what a run did, as a human table and as JSON (`--json OUT`).
//
// Time: `seconds` is the timed window, from the first packet a source emitted to the last one a
// sink took; building the app (captures loaded, tables built, devices started) and whatever
// follows the last packet (idle waits, draining, closing) are outside it, in `setup_s`.
// Rates: the headline (`mpps`, `gbps_*`) is what the sinks delivered over that window, as an RX
// figure; `offered_*` is what the sources emitted over their own window (first to last emit).
// Accounting: `packets`/`bytes` count what the sources emitted; every one of those packets is
// accounted for by a sink's `out`, some stage's `drops` or a failed node's in-flight drops
// (`unaccounted` is the difference, 0 in a correct run). `lost_before_source` counts what devices
// received but never handed to a source (no mbuf, missed, errors): delivered + dropped + lost
// before source is what the devices saw. gbps_l2 = frame bytes x 8 / s; gbps_l1 adds 24 B per
// packet (preamble, IFG, FCS) as a line-rate figure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/metrics/latency_report.hpp"
#include "framework/metrics/port_tx.hpp"
#include "framework/metrics/trace_report.hpp"

namespace tp {

struct StageReport {
    std::string name;
    std::string stage;
    std::string kind;
    int node = -1;  // index of its node in RunReport::tiles (the table's row order); not in JSON
    int cpu = -1;
    int tile_x = 0, tile_y = 0;
    uint64_t in = 0, out = 0, drops = 0, cycles = 0;
    uint64_t bytes = 0;  // frame bytes of `out` (sinks: of what they delivered, drops left out)
    uint64_t lost_before = 0;  // sources: packets their device lost before handing them over
    double busy_fraction = 0;  // its node's (TileReport::busy_fraction)
    std::map<std::string, uint64_t> drop_reasons;
    std::map<std::string, uint64_t> events;
    // Sinks: the file they write or the device(s) they transmit on ("" for a sink that frees).
    std::string output;
    bool output_is_device = false;
    // Sinks that send by the descriptor's port: what each port's device or file received
    // (empty for every other stage).
    std::vector<PortTx> ports;

    // Cycles inside produce()/process() per packet it handled (sources: emitted).
    double cycles_per_packet() const;
};

// A graph node on its tile, farm and map emitters and collectors included.
struct TileReport {
    std::string node;
    std::string role;  // "" for a node running stages; "emitter", "collector" or "collector+emitter"
    int tile_x = 0, tile_y = 0;
    int cpu = -1;
    int worker = -1;  // a farm's or map's worker: its index (not in JSON)
    // The share of the timed window its thread spent in polls of this node that moved work
    // (the rest is polling empty inputs, waiting for room, or other tiles' turns).
    double busy_fraction = 0;
    uint64_t packets = 0, bytes = 0;  // taken from its inputs (a source node: emitted)
    double stalled_ms = 0;            // held still by the app's `chaos:` stall
};

struct ChannelReport {
    std::string from, to, transport;
    uint32_t capacity = 0;
    int hops = 0;
};

// An edge between two of the app's nodes as its author wired them (`l3.ipv4 -> route`): what
// the one tile sending on it handed it, and that share of what its node passed on.
struct EdgeReport {
    std::string from, output, to;  // graph node names and the output's name
    std::string stage;             // the report name of the from node's last stage ("" none)
    bool branch = false;           // from a node of several outputs
    uint64_t packets = 0, bytes = 0;
    double share = 0;              // packets / what the from node passed on
};

struct PoolReport {
    std::string name;
    uint64_t capacity = 0;
    uint64_t available = 0;
};

// How a tile thread's idle waits ended: woken by a producer's ring, or by the park timeout
// (idle for longer than it, or a wake-up that came late or was lost: a figure to watch).
struct ThreadWaits {
    int cpu = -1;
    uint64_t wakeups = 0;
    uint64_t park_timeouts = 0;
};

// A node whose tile caught an exception: the run stopped early because of it.
struct FailureReport {
    std::string node;
    std::string error;
    uint64_t dropped = 0;  // packets in flight in the node when it failed or reaching it after
};

// Packets a node freed when a second signal cut the run short (in its hands, its staging or
// its input channels): counted among the drops, listed so none is lost silently.
struct CutLoss {
    std::string node;
    uint64_t lost = 0;
};

// What ran, from what, when, and how it ended: enough to reproduce the run or tell two apart.
struct RunHeader {
    std::string version;                 // tilepipe's
    std::string config;                  // path of the app config
    std::vector<std::string> captures;   // files the sources replayed
    std::vector<std::string> overrides;  // command-line overrides, as given
    std::string topology;
    std::string start_time;              // UTC, ISO 8601, when the threads started
    bool interrupted = false;            // a signal (Ctrl-C) ended the sources early
    int signal = 0;                      // that signal's number (not in the JSON: exit_status says it)
    bool cut_short = false;              // a second signal ended the drain at once (cut_losses)
    int exit_status = 0;                 // what `tilepipe run` exits with
};

struct RunReport {
    std::string app;
    RunHeader header;
    uint64_t packets = 0;          // emitted by the sources
    uint64_t bytes = 0;
    double seconds = 0;            // timed window: first emit to last packet a sink took
    double offered_seconds = 0;    // sources' window: first emit to last emit
    double setup_s = 0;            // the rest of the run's wall time (build, idle waits, drain)
    uint64_t drops = 0;
    uint64_t delivered = 0;        // sum of sinks' out
    uint64_t delivered_bytes = 0;  // sum of sinks' bytes
    uint64_t copies = 0;           // packets a tee copied (made or dropped): they count as emitted
    int64_t unaccounted = 0;       // packets + copies - delivered - drops
    uint64_t lost_before_source = 0;  // sum of the sources' lost_before
    // The timed window on the system clock (ns since the epoch; 0: none): the first emit, the
    // last emit, the last packet a sink took (0: no sink took any). Ranks merge their windows.
    int64_t first_emit_ns = 0, last_emit_ns = 0, end_ns = 0;
    size_t threads = 0;
    std::vector<ThreadWaits> waits;  // per tile thread
    std::vector<StageReport> stages;
    std::vector<TileReport> tiles;
    std::vector<ChannelReport> channels;
    std::vector<EdgeReport> edges;       // the app's edges (not a farm's or map's inner links)
    std::vector<PoolReport> pools;
    std::vector<FailureReport> failures;  // empty in a run that did not fail
    std::vector<CutLoss> cut_losses;      // nodes that freed packets when the run was cut short
    LatencyReport latency;
    TraceReport trace;  // --trace N: the first N packets' paths (requested 0: none)

    // Delivered over `seconds` (the headline).
    double mpps() const;
    double gbps_l2() const;
    double gbps_l1() const;
    // Emitted over `offered_seconds`.
    double offered_mpps() const;
    double offered_gbps_l2() const;
    double offered_gbps_l1() const;
    bool pools_full() const;
};

std::string format_table(const RunReport& r);
nlohmann::json to_json(const RunReport& r);

}  // namespace tp
