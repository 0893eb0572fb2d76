// The parameters a stage instance on one graph node gets: in a farm's worker, its own
// overrides (`--set farm.W/stage.KEY=...`) and, for a port stage, a queue of its own.
#pragma once

#include "framework/config/app_config.hpp"
#include "framework/graph/app_graph.hpp"

namespace tp {

// A port in a farm's worker gets a queue of its own: worker w's source reads RX queue w (a farm
// opening the pipeline, RSS style) and its sink sends on TX queue w (DPDK queues are not
// thread-safe), on a port with a queue per worker unless `queues` says more.
ParamValues worker_params(const AppConfig& app, const NodeConfig& nc, const GraphNode& node);

}  // namespace tp
