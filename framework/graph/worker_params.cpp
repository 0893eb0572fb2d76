#include "framework/graph/worker_params.hpp"

#include <string>

namespace tp {

ParamValues worker_params(const AppConfig& app, const NodeConfig& nc, const GraphNode& node) {
    const ParamValues& own = nc.pattern >= 0 ? nc.params_of(node.worker) : nc.params;
    if (nc.pattern < 0 || app.patterns[static_cast<size_t>(nc.pattern)].map) return own;
    const char* key = nc.stage->kind == StageKind::Source ? "rx_queue" : nc.stage->kind == StageKind::Sink ? "tx_queue" : nullptr;
    const ParamSpec* queue = key != nullptr ? nc.stage->find_param(key) : nullptr;
    if (queue == nullptr) return own;
    ParamValues p = own;
    p.set(*queue, std::to_string(node.worker), nc.where);
    if (!p.given("queues") && nc.stage->find_param("queues") != nullptr)
        p.set(*nc.stage->find_param("queues"), std::to_string(app.patterns[static_cast<size_t>(nc.pattern)].workers),
              nc.where);
    return p;
}

}  // namespace tp
