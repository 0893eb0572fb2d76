// The packet trace of a run (`tilepipe run --trace N`): each traced packet's path through the
// graph, stage by stage, and where it ended. Printed after the report and under `trace` in
// the JSON report.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace tp {

// One stage that handled a traced packet.
struct TraceHop {
    std::string node;    // the graph node (its tile's), as the report's tiles list names it
    std::string stage;   // the stage instance, as the report's stages list names it
    int tile_x = 0, tile_y = 0;
    int cpu = -1;
    std::string step;    // emitted, passed, delivered, dropped, held (the stage kept it)
    std::string reason;  // the drop reason (dropped)
};

struct TracedPacket {
    uint32_t packet = 0;  // 1 for the first packet the sources emitted
    std::vector<TraceHop> path;
    // "delivered", "dropped", "held", or "unfinished" (the run failed or was cut short first).
    std::string end() const;
};

struct TraceReport {
    uint32_t requested = 0;  // N of --trace N; 0: no trace
    std::vector<TracedPacket> packets;
};

// "trace (first 2 packets):\n  1: src [0,0] emitted -> parse [1,0] -> drop [2,0] delivered\n...";
// empty without a trace.
std::string format_trace(const TraceReport& t);
// [{"packet": 1, "end": "delivered", "path": [{"node", "stage", "tile", "cpu", "step", "reason"}]}]
nlohmann::json trace_json(const TraceReport& t);

}  // namespace tp
