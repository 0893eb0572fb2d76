// AppGraph: an app expanded into what runs — graph nodes (each one tile running a chain of
// stage instances) and the channels between them.
//
// A stage node of the config becomes one graph node. A farm becomes an emitter (unless the
// upstream node dispatches itself, or the farm opens the pipeline and each worker's source
// reads its own queue, or the emitter is folded into the node before it), W worker nodes (or
// W pipelines of nodes) and a collector (unless folded into the stage node after it)
// (unless the next node reads the workers directly). A map becomes an emitter, W workers
// linked by the multicast (linear or tree) over word channels, and a collector. A node's
// output channels are its edges in order; its dispatch policy picks among them. A node whose
// stage has several outputs (a branch) sends each packet on the edge of the output it chose;
// elements are built in AppConfig::order, so every edge is made before its target is.
#pragma once

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/model/dispatch.hpp"

namespace tp {

enum class NodeRole : uint8_t {
    Stages,        // a chain of stages between descriptor channels (stage nodes, farm tiles)
    MapEmitter,    // stores each burst in a task slot and multicasts the slot's index
    MapWorker,     // runs its chain on its share of each task
    MapCollector,  // completes tasks and emits them in order
    RankSend,      // one end of a link to another rank: sends what it takes (rank_plan.hpp)
    RankReceive,   // the other end: emits what the other rank sent, copied into its own pool
};

struct GraphNode {
    NodeRole role = NodeRole::Stages;
    int pattern = -1;     // map nodes: index into AppConfig::patterns
    uint32_t worker = 0;  // map and farm workers: their index
    std::string name;
    std::vector<size_t> stages;  // AppConfig::pipeline indices, run in order on every burst
    Dispatch dispatch = Dispatch::Single;
    bool stamp_sequence = false;  // emitter of an ordered farm: numbers the packets
    bool reorder = false;         // collector of an ordered farm: restores their order
    int numbered_by = -1;         // collector of an ordered farm fed on_demand: the node that
                                  // numbers its packets, which it holds back (SequenceCredit)
    bool report_drops = false;    // worker nodes of an ordered farm: tell the collector which
                                  // numbers their stages dropped (as holes passed downstream)
    double load = 0;              // estimated work per packet of the app (StageInfo::cost
                                  // units): decides which tiles share a CPU
    int rank_link = -1;           // RankSend/RankReceive: the link's index (RankLayout::links)
    int peer_rank = -1;           // RankSend/RankReceive: the rank at the link's other end
    Location where;
};

struct GraphEdge {
    size_t from = 0, to = 0;
    std::string transport;
    uint32_t capacity = 0;
    double weight = 1.0;  // share of the app's packets it carries
    bool words = false;   // carries 64-bit words (a map's task references), not descriptors
    bool freed = false;   // a map's collector handing task slots back to its emitter
    int output = -1;      // from a Branch node: the index of the stage output it carries
    std::string label;    // the output's name where the app wires it (`ipv4`); empty: none
};

struct AppGraph {
    std::vector<GraphNode> nodes;
    std::vector<GraphEdge> edges;

    std::vector<size_t> inputs_of(size_t node) const;   // edge indices, in order
    std::vector<size_t> outputs_of(size_t node) const;  // edge indices, in order
};

// `fuse`: fold each farm's emitter into the single plain node before it and its collector into
// the stage node after it, where there are such nodes (for apps with more tiles than CPUs).
AppGraph build_graph(const AppConfig& app, bool fuse = false);

// `runtime.prefetch: burst` and the node runs stages that take bursts from channels (not a
// source's) of which one reads the packets (StageInfo::reads_packets): its tile prefetches
// the mbufs of each burst it takes. Elsewhere the lines would cross for nothing.
bool prefetches_bursts(const AppConfig& app, const GraphNode& node);

}  // namespace tp
