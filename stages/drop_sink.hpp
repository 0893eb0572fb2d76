// drop: a sink that frees every packet it receives and counts it as delivered. The end of
// the replay benchmark (`conf/forward.yaml`) and of any app whose output is only counters.
//
// Simple mbufs (see PacketDesc) go straight back into the app's pool without their headers
// being read: the CPU that allocates them finds those lines still in its own cache. Anything
// else is freed the long way (chains, clones, other pools).
#pragma once

#include "framework/stage/stage.hpp"

struct rte_mempool;

namespace tp {

class DropSink final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    static constexpr bool kReadsPackets = false;  // simple mbufs go back unread (above)
    explicit DropSink(const ParamValues&) : Stage(kKind) {}
    void open(StageEnv& env) override;
    void process(Burst& b) override;

private:
    rte_mempool* pool_ = nullptr;
};

}  // namespace tp
