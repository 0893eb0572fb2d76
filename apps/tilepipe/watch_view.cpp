#include "apps/tilepipe/watch_view.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "framework/metrics/text_table.hpp"

namespace tp::cli {

namespace {

// The endpoints send fractional values as decimal strings (DPDK telemetry has no floats).
double number(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return std::strtod(v.get<std::string>().c_str(), nullptr);
    return 0;
}

uint64_t count(const nlohmann::json& v) { return v.is_number_unsigned() || v.is_number_integer() ? v.get<uint64_t>() : 0; }

std::string fixed(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string kind_of(const nlohmann::json& v) {
    return v.is_discarded() ? "missing" : v.is_null() ? "null" : std::string(v.type_name());
}

// `key` of object `o`, when present, is of the kind `ok` says.
template <typename Ok>
std::string field_problem(const nlohmann::json& o, const std::string& where, const char* key, const char* want, Ok ok) {
    if (!o.contains(key) || ok(o[key])) return "";
    return where + ": '" + key + "' is " + kind_of(o[key]) + ", not " + want;
}

const auto is_text = [](const nlohmann::json& v) { return v.is_string(); };
const auto is_count = [](const nlohmann::json& v) { return v.is_number_unsigned(); };
// Counts, and fractions as decimal strings (DPDK telemetry has no floats) or numbers.
const auto is_figure = [](const nlohmann::json& v) { return v.is_number() || v.is_string(); };

struct Row {
    std::string name, stage;
    uint64_t in = 0, out = 0, drops = 0;
    double busy = 0, in_pps = 0, out_pps = 0;
};

}  // namespace

std::string watch_reply_problem(const WatchSample& now) {
    const nlohmann::json& s = now.stats;
    if (!s.is_object()) return "/tilepipe/stats is " + kind_of(s) + ", not an object";
    std::string p;
    for (const char* k : {"state", "app"})
        if (p.empty()) p = field_problem(s, "/tilepipe/stats", k, "a string", is_text);
    for (const char* k : {"delivered", "packets", "drops"})
        if (p.empty()) p = field_problem(s, "/tilepipe/stats", k, "a count", is_count);
    for (const char* k : {"seconds", "mpps"})
        if (p.empty()) p = field_problem(s, "/tilepipe/stats", k, "a number", is_figure);
    if (!p.empty()) return p;
    const nlohmann::json& l = now.latency;
    if (!l.is_null() && !l.is_discarded()) {
        if (!l.is_object()) return "/tilepipe/latency is " + kind_of(l) + ", not an object";
        p = field_problem(l, "/tilepipe/latency", "mode", "a string", is_text);
        for (const char* k : {"p50_us", "p90_us", "p99_us", "p999_us", "max_us"})
            if (p.empty()) p = field_problem(l, "/tilepipe/latency", k, "a number", is_figure);
        if (p.empty()) p = field_problem(l, "/tilepipe/latency", "samples", "a count", is_count);
        if (!p.empty()) return p;
    }
    // The nodes: one list per column, as long as the list of names.
    const nlohmann::json& n = now.nodes;
    if (n.is_null() || n.is_discarded() || (n.is_object() && !n.contains("name"))) return "";
    if (!n.is_object()) return "/tilepipe/nodes is " + kind_of(n) + ", not an object";
    const std::pair<const char*, bool (*)(const nlohmann::json&)> columns[] = {
        {"name", +is_text}, {"stage", +is_text}, {"in", +is_count}, {"out", +is_count}, {"drops", +is_count},
        {"busy_fraction", +is_figure}};
    for (const auto& [key, ok] : columns) {
        // DPDK drops what does not fit its 16 KiB reply: a big app's last columns may be missing
        // or short (watch_frame() says so); a column longer than the names is not DPDK's doing.
        if (!n.contains(key) && key != std::string("name")) continue;
        const nlohmann::json v = n.contains(key) ? n[key] : nlohmann::json(nlohmann::json::value_t::discarded);
        if (!v.is_array()) return std::string("/tilepipe/nodes: '") + key + "' is " + kind_of(v) + ", not a list";
        if (v.size() > n["name"].size())
            return std::string("/tilepipe/nodes: '") + key + "' has " + std::to_string(v.size()) + " entries for " +
                   std::to_string(n["name"].size()) + " nodes";
        for (size_t i = 0; i < v.size(); ++i)
            if (!ok(v[i]))
                return std::string("/tilepipe/nodes: '") + key + "' entry " + std::to_string(i) + " is " + kind_of(v[i]);
    }
    return "";
}

std::string watch_frame(const WatchSample& now, WatchMemory& memory) {
    const nlohmann::json& s = now.stats;
    const std::string state = s.value("state", "idle");
    std::string text = "app " + s.value("app", std::string("-")) + "  " + state;
    if (state == "idle") return text + ": no run published yet\n";
    const double seconds = number(s.value("seconds", nlohmann::json("0")));
    const double dt = memory.seconds >= 0 ? seconds - memory.seconds : 0;
    // Differences over the interval, or the run's averages when there is none to take.
    const auto per_s = [&](uint64_t now_v, uint64_t before) {
        if (dt > 0) return now_v >= before ? double(now_v - before) / dt : 0.0;
        return seconds > 0 ? double(now_v) / seconds : 0.0;
    };
    const uint64_t delivered = count(s.value("delivered", nlohmann::json(0)));
    text += "  " + fixed(seconds, 1) + " s\n";
    text += "delivered " + std::to_string(delivered) + "  " + fixed(per_s(delivered, memory.delivered) / 1e6, 3) +
            " Mpps now  " + fixed(number(s.value("mpps", nlohmann::json("0"))), 3) + " Mpps avg  offered " +
            std::to_string(count(s.value("packets", nlohmann::json(0)))) + "  drops " +
            std::to_string(count(s.value("drops", nlohmann::json(0)))) + "\n";
    const nlohmann::json& l = now.latency;
    if (l.is_object() && l.value("mode", "off") != "off") {
        text += "latency us ";
        for (const char* k : {"p50", "p90", "p99", "p999", "max"})
            text += std::string(" ") + k + " " + fixed(number(l.value(std::string(k) + "_us", nlohmann::json("0"))), 2);
        text += "  (" + std::to_string(count(l.value("samples", nlohmann::json(0)))) + " samples)\n";
    }
    std::vector<Row> rows;
    const nlohmann::json& n = now.nodes;
    WatchMemory next;
    next.seconds = seconds;
    next.delivered = delivered;
    // Entry i of a column, null where DPDK's reply was cut before it.
    const auto cell = [&n](const char* key, size_t i) {
        return n.contains(key) && i < n[key].size() ? n[key][i] : nlohmann::json();
    };
    size_t cut = 0;  // nodes some of whose figures the reply lacks
    if (n.is_object() && n.contains("name"))
        for (size_t i = 0; i < n["name"].size(); ++i) {
            Row r;
            r.name = n["name"][i].get<std::string>();
            const nlohmann::json stage = cell("stage", i);
            r.stage = stage.is_string() ? stage.get<std::string>() : "?";
            for (const char* k : {"stage", "in", "out", "drops", "busy_fraction"})
                if (cell(k, i).is_null()) {
                    ++cut;
                    break;
                }
            r.in = count(cell("in", i));
            r.out = count(cell("out", i));
            r.drops = count(cell("drops", i));
            const double busy_s = number(cell("busy_fraction", i)) * seconds;
            r.busy = dt > 0 ? std::max(0.0, (busy_s - memory.busy_s[r.name]) / dt) : number(cell("busy_fraction", i));
            r.in_pps = per_s(r.in, memory.in[r.name]);
            r.out_pps = per_s(r.out, memory.out[r.name]);
            next.in[r.name] = r.in;
            next.out[r.name] = r.out;
            next.busy_s[r.name] = busy_s;
            rows.push_back(std::move(r));
        }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.busy > b.busy; });
    TextTable t;
    using A = TextTable::Align;
    for (const auto& [h, a] : {std::pair{"node", A::Left}, {"stage", A::Left}, {"busy", A::Right}, {"in Mpps", A::Right},
                               {"out Mpps", A::Right}, {"in", A::Right}, {"out", A::Right}, {"drops", A::Right}})
        t.add_column(h, a);
    for (const Row& r : rows)
        t.add_row({r.name, r.stage, fixed(r.busy * 100, 0) + "%", fixed(r.in_pps / 1e6, 3), fixed(r.out_pps / 1e6, 3),
                   std::to_string(r.in), std::to_string(r.out), std::to_string(r.drops)});
    memory = std::move(next);
    if (cut != 0)
        text += "(DPDK's telemetry cut the reply at its size limit: " + std::to_string(cut) + " of " +
                std::to_string(rows.size()) + " nodes lack some figures, shown as 0)\n";
    return text + t.str();
}

}  // namespace tp::cli
