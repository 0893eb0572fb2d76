// What the capture sources of a run left out, summed over them from their events: records
// skipped (by reason), damaged records that ended a capture's reading, and packets the
// capturing interfaces dropped. A line of the report's table (only when something was left
// out) and its `capture` object in JSON (always).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace tp {

struct RunReport;

struct CaptureSummary {
    uint64_t skipped_records = 0;
    std::map<std::string, uint64_t> skipped;  // by reason ("empty_record", ...)
    uint64_t errors = 0;
    uint64_t interface_drops = 0;
};

CaptureSummary capture_summary(const RunReport& r);
// "capture: 37 records skipped (empty_record 37); ...\n", or "" when nothing was left out.
std::string format_capture(const RunReport& r);
void add_capture_json(nlohmann::json& j, const RunReport& r);

}  // namespace tp
