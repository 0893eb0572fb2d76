// Dispatch: how a node hands packets to its output channels, the word the graph plans with and
// the runtime runs by (so runtime/ need not reach up into graph/ for it).
#pragma once

#include <string>

namespace tp {

enum class Dispatch {
    Single,      // one output
    RoundRobin,  // whole bursts to outputs in turn
    OnDemand,    // to the first output with room, starting after the last one served
    FlowHash,    // each packet to output hash % W: one flow, one worker
    Branch,      // each packet to the output its node's last stage chose (Stage::set_output)
};
// A farm's `dispatch:` (round_robin, on_demand, flow_hash); std::invalid_argument otherwise.
Dispatch dispatch_policy(const std::string& name);

}  // namespace tp
