// A LiveView as JSON: what the live page (`/live.json` of `tilepipe run --metrics`) reads each
// second. It is the run report's JSON (to_json) so far, plus `state` (starting, running, done)
// and each channel's `queued` (items in it now, -1 where the transport cannot tell).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/metrics/live_view.hpp"

namespace tp {

nlohmann::json live_json(const LiveView& v);

// Sets `queued` on each entry of the report JSON's `channels` from `queued` (-1 past its end).
void add_queued(nlohmann::json& report, const std::vector<int64_t>& queued);

}  // namespace tp
