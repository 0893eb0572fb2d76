#include "framework/metrics/live_json.hpp"

#include <nlohmann/json.hpp>

namespace tp {

void add_queued(nlohmann::json& report, const std::vector<int64_t>& queued) {
    if (!report.contains("channels") || !report["channels"].is_array()) return;
    for (size_t i = 0; i < report["channels"].size(); ++i) report["channels"][i]["queued"] = i < queued.size() ? queued[i] : -1;
}

nlohmann::json live_json(const LiveView& v) {
    nlohmann::json j = to_json(v.report);
    j["state"] = !v.started ? "starting" : v.finished ? "done" : "running";
    add_queued(j, v.queued);
    return j;
}

}  // namespace tp
