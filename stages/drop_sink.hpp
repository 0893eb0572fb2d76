// drop: a sink that frees every packet it receives and counts it as delivered. The end of
// the replay benchmark (`conf/forward.yaml`) and of any app whose output is only counters.
#pragma once

#include "framework/stage/stage.hpp"

namespace tp {

class DropSink final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    explicit DropSink(const ParamValues&) : Stage(kKind) {}
    void process(Burst& b) override;
};

}  // namespace tp
