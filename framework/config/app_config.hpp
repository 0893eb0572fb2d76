// AppConfig: an app as the user wrote it in YAML, validated against the stage registry.
//
//   app: forward                # optional; defaults to the file's stem
//   transport: ring             # default transport of every link (optional)
//   queue: 1024                 # default link capacity in descriptors (optional)
//   pool: { mbufs: 16383, cache: 256, data_room: 2048 }
//   runtime: { threads: auto, fuse: auto, idle: auto }  # threads: auto | per_tile;
//                                # fuse: auto | always | never; idle: auto | spin | park;
//                                # rank_links: auto | messages (links between ranks of one host);
//                                # prefetch: none | burst (mbufs of a burst a tile takes)
//   latency: sample 64          # off | sample N | all (framework/metrics/latency_config.hpp)
//   chaos: { stall: fw.3, stall_ms: 200, after_packets: 1000 }  # a fault on purpose (optional)
//   memory: first_touch         # local | interleave | first_touch (memory_settings.hpp)
//   topology: host              # host | tilepro64 | epiphany16 | epiphany64
//   placement: compact          # linear | snake | compact
//   network: { queues: 4, queue_words: 128 }  # the udn links' network (network_settings.hpp)
//   pipeline:
//     - stage: pcap             # reserved keys: stage, name, transport, queue, tile, memory, rank, next
//       name: src               # default: the stage name (then name_2, name_3, ...)
//       file: capture.pcap      # every other key is a stage parameter
//     - farm:                   # emitter -> workers -> collector
//         workers: 4
//         dispatch: flow_hash   # round_robin | on_demand | flow_hash
//         collect: ordered      # unordered | ordered | none
//         worker:               # the chain every worker runs on each packet
//           - stage: pass
//     - map:                    # emitter -tree multicast-> workers -> collector
//         workers: 8
//         multicast: tree       # linear | tree
//         worker: [stage: pass]
//     - stage: drop
//   Branches: a node's `next: {OUTPUT: NODE, OUTPUT: {to: NODE, transport: sm, queue: 256}}`
//   wires each of its outputs (app_wiring.hpp); without it, its one output flows on down the list.
//
// Every error is a LocatedError `file:line:col: message`, raised before EAL starts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/config/location.hpp"
#include "framework/config/memory_settings.hpp"
#include "framework/config/network_settings.hpp"
#include "framework/metrics/latency_config.hpp"
#include "framework/model/wiring.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/registry.hpp"
#include "framework/topology/topology.hpp"

namespace tp {

struct NodeConfig {
    std::string name;
    const StageInfo* stage = nullptr;
    Location where;                      // the node's `stage:` key
    // Parameter text as written (or set with --set), bound to `params` by finalize().
    std::map<std::string, std::pair<std::string, Location>> raw;
    ParamValues params;
    std::string transport;               // of the link into this node; empty = app default
    uint32_t queue = 0;                  // capacity of that link; 0 = app default
    Location transport_where, queue_where;  // where each was given
    std::optional<TileXY> tile;          // explicit `tile: [x, y]`; empty = placement decides
    Location tile_where;
    // One worker's own tile (`--set FARM.W/NODE.tile=[x,y]`), with where it was given.
    std::map<uint32_t, std::pair<TileXY, Location>> worker_tile;
    MemorySetting memory;                // `memory:`; empty = its farm's or the app's
    std::map<uint32_t, MemorySetting> worker_memory;  // one worker's own (--set FARM.W/NODE.memory)
    int pattern = -1;                    // index into AppConfig::patterns for a farm/map worker stage
    // One worker's own parameter text (`--set FARM.W/NODE.PARAM=VALUE`), bound by finalize()
    // over `params` into `worker_params`.
    std::map<uint32_t, std::map<std::string, std::pair<std::string, Location>>> worker_raw;
    std::map<uint32_t, ParamValues> worker_params;
    // `next:`: where each output goes (framework/model/wiring.hpp); none given (has_next false):
    // its one output flows into the next list item.
    std::vector<NextEdge> next;
    bool has_next = false;
    Location next_where;
    // `rank: N`: the process (an mpirun rank) the node runs on; empty: rank 0 (rank_plan.hpp).
    std::optional<int> rank;
    Location rank_where;

    // The parameters worker `worker` of its farm or map runs with (`params` unless overridden).
    const ParamValues& params_of(uint32_t worker) const;
};

// A parallel pattern over W workers running the stages pipeline[first, last):
//  - farm (run-to-completion): emitter -> W workers, each running the whole chain on every
//    packet it gets (or, with `worker: {pipeline: [...]}`, each stage on its own tile) ->
//    collector;
//  - map (data-parallel): the emitter multicasts each burst (a task) to all W workers, linearly
//    or down a binary tree; each worker runs the chain on its share of the burst; the
//    collector completes a task when all W partials arrived and emits it in order.
struct PatternConfig {
    bool map = false;
    std::string multicast = "tree";        // map: linear | tree
    std::string name;
    Location where;
    size_t first = 0, last = 0;
    uint32_t workers = 2;
    std::string dispatch = "round_robin";  // round_robin | on_demand | flow_hash
    std::string collect = "unordered";     // unordered | ordered | none
    bool emitter = true;                   // false: the upstream node dispatches or, first in
                                           // the pipeline, each worker's source reads its own
                                           // queue (RSS style)
    bool dispatch_given = false;
    bool worker_pipeline = false;
    std::string transport;                 // links inside the pattern; empty = app default
    uint32_t queue = 0;
    MemorySetting memory;                  // its emitter's, workers' and collector's; empty = the app's
    // `rank: N`: the rank its emitter and collector (and workers, without `ranks`) run on;
    // `ranks: [1, 2]` (farms): its workers spread round-robin over those ranks (rank_plan.hpp).
    std::optional<int> rank;
    Location rank_where;
    std::vector<int> ranks;
    Location ranks_where;
    std::vector<NextEdge> next;            // `next:` of the farm or map (its output `out`)
    bool has_next = false;
    Location next_where;
};

// One entry of the top-level pipeline: a stage node, or a farm or map.
struct PipelineElement {
    int node = -1;     // index into AppConfig::pipeline
    int pattern = -1;  // index into AppConfig::patterns
};

struct PoolConfig {
    uint32_t mbufs = 0;   // 0 = sized from the graph
    Location mbufs_where; // where `mbufs` was given
    uint32_t cache = 256;
    uint32_t data_room = 2048;
};

// A fault injected on purpose, to see the app cope: graph node `stall` (a name the report's
// tiles list: `parse`, `fw.3`, `fw` (a farm's emitter)...) takes and sends nothing for
// `stall_ms` once it has taken `after_packets` packets. Empty `stall`: none.
struct ChaosConfig {
    std::string stall;
    uint64_t stall_ms = 200;
    uint64_t after_packets = 0;
    Location where;  // where `stall` was given
};

struct AppConfig {
    std::string name;
    std::string file;
    std::string transport = "ring";
    uint32_t queue = 1024;
    PoolConfig pool;
    std::string threads = "auto";        // auto | per_tile
    std::string fuse = "auto";           // auto (fold farm emitters/collectors into their
                                         // neighbours when tiles outnumber CPUs) | always | never
    std::string idle = "auto";           // how an idle tile waits: auto | spin | park (idle_mode.hpp)
    std::string rank_links = "auto";     // auto (ranks of one host lend packets through shared
                                         // memory) | messages (every link between ranks copies)
    std::string prefetch = "none";       // none (stages prefetch a packet or two ahead) | burst (a
                                         // tile prefetches the mbufs of each burst it takes)
    std::string topology = "host";       // a Topology preset
    Location topology_where;
    std::string placement = "compact";   // linear | snake | compact
    LatencyConfig latency;               // what the sinks measure (`latency:`, `--latency`)
    NetworkSettings network;             // shape of the network udn links run on
    ChaosConfig chaos;
    MemorySetting memory;                // `memory:` (memory_settings.hpp); empty = first_touch
    uint32_t trace = 0;                  // `tilepipe run --trace N`: trace the first N packets (0: off)
    std::vector<NodeConfig> pipeline;      // every stage node, pattern workers' stages in place
    std::vector<PatternConfig> patterns;
    std::vector<PipelineElement> elements; // the top-level pipeline, in order
    // Resolved by check_app (app_wiring.hpp): the edges between elements, and the elements in
    // an order where every edge points forward (list order for an app without `next:`).
    std::vector<AppEdge> edges;
    std::vector<size_t> order;

    NodeConfig* find_node(const std::string& name);
};

// Reads and validates `path`; parameters are bound (finalize() already ran).
AppConfig load_app_config(const std::string& path);
// Same from text (tests); `file` names it in errors.
AppConfig parse_app_config(const std::string& text, const std::string& file);

// One setting as a config file would hold it, checked as the file checks it, every error at
// `where` (the override that gave it). Keys: a top-level key (`transport`, `queue`, `topology`,
// `placement`, `app`) or `pool.KEY` / `runtime.KEY` / `network.KEY`, `memory`; a farm's or map's key; a node's parameter
// or `transport`, `queue`, `tile`, `memory`. Run check_app() once every setting is in.
void set_app_setting(AppConfig& app, const std::string& key, const std::string& value, const Location& where);
void set_pattern_setting(PatternConfig& f, const std::string& key, const std::string& value, const Location& where);
void set_node_setting(NodeConfig& n, const std::string& key, const std::string& value, const Location& where);
// `[x, y]` given at `where` as a tile (LocatedError otherwise).
TileXY read_tile(const std::string& value, const Location& where);
// A farm's or map's key as set_pattern_setting reads it, `name` included (an override may not
// rename, a program building the app may).
void set_pattern_key(PatternConfig& f, const std::string& key, const std::string& value, const Location& where);

// The steps an app is assembled by, one path for the YAML loader and the C++ builder
// (include/tilepipe/app.hpp): each checks what it is given and throws LocatedError at `where`.
// A registered stage by name ("unknown stage 'x' (known: ...)").
const StageInfo* find_stage(const std::string& name, const Location& where);
// A node's `name:` (letters, digits, '_' and '-'; not a settings group's name).
void set_node_name(NodeConfig& n, const std::string& name, const Location& where);
// Appends a stage node, or a farm or map with the stages each worker runs, to the pipeline.
void add_pipeline_node(AppConfig& app, NodeConfig n);
void add_pipeline_pattern(AppConfig& app, PatternConfig f, std::vector<NodeConfig> worker);
// Once every element is in: names the unnamed nodes and patterns, then check_app(); an empty
// pipeline is an error at `where`.
void complete_app(AppConfig& app, const Location& where);
// "src -> parse -> fw=farm(4){acl -> flow_table} -> drop": the nodes in order, `name(stage)`
// where the two differ, a farm or map with its workers and their chain (its name first unless
// it is the default farm, farm_2, map, ...).
std::string describe_app(const AppConfig& app);

// The checks that span settings (pipeline shape, farms' combinations) and parameter binding:
// after settings changed, since one override may undo what another left inconsistent.
void check_app(AppConfig& app);
// Checks between a stage's parameters (StageInfo::check_params) once every `--set` is
// applied; plan_app calls it. `only`: per pipeline node, whether to check it (a rank checks
// the stages it runs: the files they read are on its host); empty: every node.
void check_stage_params(const AppConfig& app, const std::vector<bool>& only = {});

// `--latency off|all|sample N`.
void set_latency(AppConfig& app, const std::string& text);

// Binds raw parameter text to typed values (defaults filled, unknown keys rejected).
void finalize(AppConfig& app);

}  // namespace tp
