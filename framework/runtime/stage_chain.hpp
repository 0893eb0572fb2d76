// Running a chain of stages on one burst, run-to-completion, with the per-stage accounting
// every tile does the same way: `in`, `out` (a sink's out = in - its drops), bytes delivered by
// sinks, bursts, and TSC cycles inside process(). Stops early when the burst empties.
// With `latency`, a sink at the end of the chain records the end-to-end latency of the
// packets it delivers (latency_probe.hpp); with a trace, the traced packets' steps are noted.
#pragma once

#include <cstdint>
#include <span>

#include "descriptors/burst.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class NodeTrace;
class SinkLatency;

// With `trace`, the traced packets' steps are noted (packet_trace.hpp), `first` being the
// index of chain[0] in its node's chain.
void run_stage_chain(std::span<Stage* const> chain, Burst& b, SinkLatency* latency = nullptr, NodeTrace* trace = nullptr,
                     size_t first = 0);

// Frame bytes of a burst.
uint64_t burst_bytes(const Burst& b);

}  // namespace tp
