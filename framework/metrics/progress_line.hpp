// The line `tilepipe run` shows while a run lasts: what moved in the last interval, the average
// since the first packet, the packets so far, the loop a replayed capture is on and the time left
// when the sources know their stream's length.
#pragma once

#include <cstdint>
#include <string>

#include "framework/metrics/emit_plan.hpp"

namespace tp {

struct ProgressSample {
    double seconds = 0;    // since the first packet a source emitted
    uint64_t packets = 0;  // emitted by the sources so far
    uint64_t bytes = 0;
};

// "12.0 s: 601.2 M packets; last 1.000 s 50.10 Mpps 25.65 Gb/s; average 50.10 Mpps; loop 3 of
// 10; 4.0 s left" ("all emitted, draining" once the sources are done). `before` is the previous
// sample (all zero for the first line); `plan` the sources' plan summed (EmitPlan{} when unknown).
std::string format_progress(const ProgressSample& now, const ProgressSample& before, const EmitPlan& plan);

}  // namespace tp
