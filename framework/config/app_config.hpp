// AppConfig: an app as the user wrote it in YAML, validated against the stage registry.
//
//   app: forward                # optional; defaults to the file's stem
//   transport: ring             # default transport of every link (optional)
//   queue: 1024                 # default link capacity in descriptors (optional)
//   pool: { mbufs: 16383, cache: 256, data_room: 2048 }
//   runtime: { threads: auto }  # auto | per_tile
//   topology: host              # host | tilepro64 | epiphany16 | epiphany64
//   placement: compact          # linear | snake | compact
//   pipeline:
//     - stage: pcap             # reserved keys: stage, name, transport, queue, tile
//       name: src               # default: the stage name (then name_2, name_3, ...)
//       file: capture.pcap      # every other key is a stage parameter
//     - stage: drop
//
// Every error is a LocatedError `file:line:col: message`, raised before EAL starts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/config/location.hpp"
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
    std::optional<TileXY> tile;          // explicit `tile: [x, y]`; empty = placement decides
};

struct PoolConfig {
    uint32_t mbufs = 0;   // 0 = sized from the graph
    uint32_t cache = 256;
    uint32_t data_room = 2048;
};

struct AppConfig {
    std::string name;
    std::string file;
    std::string transport = "ring";
    uint32_t queue = 1024;
    PoolConfig pool;
    std::string threads = "auto";        // auto | per_tile
    std::string topology = "host";       // a Topology preset
    Location topology_where;
    std::string placement = "compact";   // linear | snake | compact
    std::vector<NodeConfig> pipeline;

    NodeConfig* find_node(const std::string& name);
};

// Reads and validates `path`; parameters are bound (finalize() already ran).
AppConfig load_app_config(const std::string& path);
// Same from text (tests); `file` names it in errors.
AppConfig parse_app_config(const std::string& text, const std::string& file);

// `--set NODE.PARAM=VALUE`: replaces or adds a parameter, then re-validates it.
void apply_set(AppConfig& app, const std::string& assignment);
// `--pcap FILE`: the app's source becomes a `pcap` source reading FILE (keeps its name).
void replace_source_with_pcap(AppConfig& app, const std::string& file);
// `--loop N`: replay count of every pcap source.
void set_loop(AppConfig& app, uint64_t loops);
// `--topology NAME`.
void set_topology(AppConfig& app, const std::string& name);

// Binds raw parameter text to typed values (defaults filled, unknown keys rejected).
void finalize(AppConfig& app);

}  // namespace tp
