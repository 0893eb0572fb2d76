// pass: a processor that hands every burst on unchanged. It measures what a stage boundary
// costs (a channel hop, a poll) with no work inside; `conf/bench/chain16.yaml` chains them.
#pragma once

#include "framework/stage/stage.hpp"

namespace tp {

class Pass final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 0;  // only its hop costs
    static constexpr bool kReadsPackets = false;
    explicit Pass(const ParamValues&) : Stage(kKind) {}
    void process(Burst&) override {}
};

}  // namespace tp
