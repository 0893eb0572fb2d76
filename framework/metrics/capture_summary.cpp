#include "framework/metrics/capture_summary.hpp"

#include <nlohmann/json.hpp>

#include "framework/metrics/run_report.hpp"

namespace tp {

namespace {
constexpr const char* kSkippedPrefix = "capture.skipped.";
}

CaptureSummary capture_summary(const RunReport& r) {
    CaptureSummary c;
    for (const StageReport& st : r.stages) {
        if (st.kind != "source") continue;
        for (const auto& [name, n] : st.events) {
            if (name == "capture.skipped_records") c.skipped_records += n;
            else if (name == "capture.errors") c.errors += n;
            else if (name == "capture.interface_drops") c.interface_drops += n;
            else if (name.rfind(kSkippedPrefix, 0) == 0 && n != 0) c.skipped[name.substr(16)] += n;
        }
    }
    return c;
}

std::string format_capture(const RunReport& r) {
    const CaptureSummary c = capture_summary(r);
    std::string s;
    if (c.skipped_records != 0) {
        s += std::to_string(c.skipped_records) + (c.skipped_records == 1 ? " record" : " records") +
             " skipped, not replayed (";
        bool first = true;
        for (const auto& [why, n] : c.skipped) {
            s += (first ? "" : ", ") + why + " " + std::to_string(n);
            first = false;
        }
        s += ")";
    }
    if (c.errors != 0)
        s += (s.empty() ? "" : "; ") + std::to_string(c.errors) +
             (c.errors == 1 ? " damaged record" : " damaged records") + " ended reading (what came before was replayed)";
    if (c.interface_drops != 0)
        s += (s.empty() ? "" : "; ") + std::to_string(c.interface_drops) +
             " packets dropped by the capturing interfaces (not in the file)";
    return s.empty() ? s : "capture: " + s + "\n";
}

void add_capture_json(nlohmann::json& j, const RunReport& r) {
    const CaptureSummary c = capture_summary(r);
    j["capture"] = {{"skipped_records", c.skipped_records},
                    {"skipped", c.skipped},
                    {"errors", c.errors},
                    {"interface_drops", c.interface_drops}};
}

}  // namespace tp
