#include "framework/metrics/trace_report.hpp"

#include <nlohmann/json.hpp>

namespace tp {

std::string TracedPacket::end() const {
    if (path.empty()) return "unfinished";
    const std::string& last = path.back().step;
    return last == "emitted" || last == "passed" ? "unfinished" : last;
}

std::string format_trace(const TraceReport& t) {
    if (t.requested == 0) return {};
    std::string s = "trace (first " + std::to_string(t.requested) + " packet" + (t.requested == 1 ? "" : "s") +
                    (t.packets.size() < t.requested ? "; the sources emitted " + std::to_string(t.packets.size()) : "") +
                    "):\n";
    for (const TracedPacket& p : t.packets) {
        std::string line = "  " + std::to_string(p.packet) + ":";
        for (size_t i = 0; i < p.path.size(); ++i) {
            const TraceHop& h = p.path[i];
            line += (i == 0 ? " " : " -> ") + h.stage + " [" + std::to_string(h.tile_x) + "," + std::to_string(h.tile_y) + "]";
            if (h.step != "passed") line += " " + h.step;
            if (!h.reason.empty()) line += " (" + h.reason + ")";
        }
        if (p.end() == "unfinished") line += " ... (no end seen: the run failed or was cut short)";
        s += line + "\n";
    }
    return s;
}

nlohmann::json trace_json(const TraceReport& t) {
    nlohmann::json out = nlohmann::json::array();
    for (const TracedPacket& p : t.packets) {
        nlohmann::json path = nlohmann::json::array();
        for (const TraceHop& h : p.path)
            path.push_back({{"node", h.node}, {"stage", h.stage}, {"tile", {h.tile_x, h.tile_y}}, {"cpu", h.cpu},
                            {"step", h.step}, {"reason", h.reason}});
        out.push_back({{"packet", p.packet}, {"end", p.end()}, {"path", path}});
    }
    return out;
}

}  // namespace tp
