// NetworkPlan: how an app's `udn` (or `udn_eventdev`) links share one messaging network, as
// on the TILEPro64: decided with the rest of the plan, before anything starts, so that
// `tilepipe validate` refuses what `run` would.
//
// The network has a tile per graph node that a link of its transport touches, each with
// `network.queues` demux queues of `network.queue_words` words and a catch-all. Every tile
// receives through interfaces (framework/noc):
//  - the links of one kind (packets, map task references, freed slots) into a node form one
//    receive interface bound to one of its queues by a data tag: a symmetric credit channel
//    for one sender, the asymmetric interface (one message queue, an ack queue per sender)
//    for several: a farm's collector and a map's gatherer pop one queue whatever N is;
//  - every link out of a node gets its credits back in a queue of the sender's, by an ack tag.
// A tile needing more queues than it has keeps the first ones to itself and multiplexes the
// rest as logical channels through its last queue (or the catch-all, `catch_all: shared`).
//
// Credits: a queue holds what its interfaces set aside. With `network.queue_words: auto` (the
// default) each queue of a `udn` network is sized to the credits its links ask for (their
// `queue`), so K is what the link asked, whatever the number of senders; with a fixed size,
// a data queue of N senders of (1 + w)-word messages bounds K <= queue_words/((1 + w) N)
// (128/(2N) for one word, the TILEPro64's bound), shared queues split their words evenly. A link's K above its bound is lowered (`credits: fit`,
// noted in `notes`) or refused (`credits: exact`), at the config place, with the numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/noc/network_config.hpp"

namespace tp {

struct AppPlan;

// One physical queue of a network tile and what it carries.
struct NetworkQueuePlan {
    uint32_t index = 0;            // demux queue (== queues: the catch-all)
    bool shared = false;           // logical channels told apart by tag (a QueueDemux)
    uint64_t reserved_words = 0;   // set aside for the credits of what it carries
    uint32_t words = 0;            // what the queue holds
    std::vector<std::string> carries;  // "data tag 5 from farm.0, farm.1 (K 5)", "acks tag 2 (K 42)"
};

struct NetworkTilePlan {
    size_t node = 0;  // graph node
    std::vector<NetworkQueuePlan> queues;  // the queues in use, in index order
};

// One receive interface: the links of one kind into one node.
struct NetworkGroupPlan {
    size_t receiver = 0;           // graph node
    std::vector<size_t> edges;     // graph edges, one per sender
    uint32_t data_queue = 0;       // at the receiver's tile
    bool data_shared = false;
    noc::Tag data_tag = 0, ack_tag = 0;
    uint32_t credits = 0;          // K per sender
    uint32_t payload_words = 0;    // per message: 2 for a descriptor, 1 for a word
    bool asymmetric() const { return edges.size() > 1; }
};

// One link (graph edge) on the network.
struct NetworkLinkPlan {
    size_t edge = 0;
    size_t group = 0;        // index into NetworkPlan::groups
    uint32_t ack_queue = 0;  // at the sender's tile
    bool ack_shared = false;
    uint32_t requested = 0;  // K the config asked for
};

struct NetworkPlan {
    std::string transport;              // "udn" or "udn_eventdev"
    noc::NetworkConfig config;          // tiles, queues, queue_words (queue_sizes when auto-sized)
    std::vector<int> tile_of_node;      // network tile per graph node, -1: not on it
    std::vector<NetworkTilePlan> tiles;  // per network tile
    std::vector<NetworkGroupPlan> groups;
    std::vector<NetworkLinkPlan> links;
    std::vector<int> link_of_edge;      // per graph edge: index into links, -1: not on it
    std::vector<std::string> notes;     // credits lowered to fit, one line per receive interface
};

// True for the transports whose links share the app's network.
bool on_app_network(const std::string& transport);

// The networks of `plan`'s links (none, or one per such transport), lowering the capacity of
// links whose K does not fit (in plan.graph.edges and plan.links). Throws LocatedError when a
// link cannot fit, or `credits: exact` and it does not.
std::vector<NetworkPlan> plan_networks(const AppConfig& app, AppPlan& plan);

}  // namespace tp
