// LatencyConfig: how much of the traffic a run measures end-to-end latency on.
//
//   latency: off        nothing stamped, nothing recorded
//   latency: sample N   one packet in N each source emits is stamped; sinks record those that
//                       reach them (default: sample 64)
//   latency: all        every packet, and each node also records how long packets waited in
//                       its input channel and how long it worked on them
//
// The same text is accepted in the config (`latency:`) and on the command line (`--latency`).
#pragma once

#include <cstdint>
#include <string>

namespace tp {

struct LatencyConfig {
    enum class Mode { Off, Sample, All };
    static constexpr uint32_t kMaxEvery = 1u << 20;

    Mode mode = Mode::Sample;
    uint32_t every = 64;  // Sample: one packet in this many; All: 1

    bool on() const { return mode != Mode::Off; }
    bool residence() const { return mode == Mode::All; }
    std::string str() const;  // "off", "all", "sample 64"
};

// "off", "all" or "sample N" (N from 1 to kMaxEvery; "sample 1" is "all" without the per-node
// residence). std::invalid_argument naming the text otherwise.
LatencyConfig parse_latency(const std::string& text);

}  // namespace tp
