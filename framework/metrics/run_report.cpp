#include "framework/metrics/run_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "framework/metrics/capture_summary.hpp"
#include "framework/metrics/text_table.hpp"
#include "framework/metrics/units.hpp"

namespace tp {

namespace {
// Preamble (7) + start delimiter (1) + inter-frame gap (12) + FCS (4): bytes a frame costs on
// the wire beyond what a capture holds.
constexpr uint64_t kL1Overhead = 24;

double per_second(double v, double seconds) { return seconds > 0 ? v / seconds : 0.0; }
double l1_bits(uint64_t bytes, uint64_t packets) { return double(bytes + packets * kL1Overhead) * 8; }

// "51.30 Mpps, 26.27 Gb/s L2, 36.12 Gb/s L1"
std::string rates(uint64_t packets, uint64_t bytes, double seconds) {
    return format_packet_rate(per_second(double(packets), seconds)) + ", " +
           format_bit_rate(per_second(double(bytes) * 8, seconds)) + " L2, " +
           format_bit_rate(per_second(l1_bits(bytes, packets), seconds)) + " L1";
}

// What a sink did with what it was handed, in words.
std::string sink_action(const StageReport& st) {
    const std::string n = std::to_string(st.out) + (st.out == 1 ? " packet" : " packets");
    if (st.stage == "results") return "handed " + n + " to the program (a packet accelerator's results)";
    if (st.output.empty()) return "dropped " + n + " (a drop sink: counted as delivered)";
    if (st.output_is_device) return "transmitted " + n + " on " + st.output;
    return "wrote " + n + " to " + st.output;
}

std::vector<std::string> notes(const StageReport& st) {
    std::vector<std::string> v;
    if (st.kind == "sink") v.push_back(sink_action(st));
    for (const auto& [why, n] : st.drop_reasons)
        if (n != 0) v.push_back("drop " + why + ": " + std::to_string(n));
    for (const auto& [what, n] : st.events)
        if (n != 0) v.push_back(what + ": " + std::to_string(n));
    if (st.lost_before != 0) v.push_back("lost before source: " + std::to_string(st.lost_before));
    // One line per output port of a sink that sends by port: "port 1 -> net_null1: 40 packets".
    for (const PortTx& p : st.ports)
        v.push_back("port " + std::to_string(p.port) + " -> " + p.to + ": " + std::to_string(p.packets) + " packets");
    return v;
}

std::string tile_xy(int x, int y) { return "[" + std::to_string(x) + "," + std::to_string(y) + "]"; }

std::string percent(double fraction) {
    char s[16];
    std::snprintf(s, sizeof s, "%.0f%%", fraction * 100);
    return s;
}

std::string cycles(double c) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f", c);
    return s;
}

std::string pools_line(const RunReport& r) {
    uint64_t capacity = 0, available = 0;
    for (const auto& p : r.pools) capacity += p.capacity, available += p.available;
    if (r.pools_full())
        return "pools full (every mbuf back: " + std::to_string(available) + " of " + std::to_string(capacity) + ")";
    return "pools NOT FULL: " + std::to_string(capacity - available) + " of " + std::to_string(capacity) +
           " mbufs never returned (leaked)";
}

nlohmann::json ports_json(const StageReport& st) {
    nlohmann::json ports = nlohmann::json::array();
    for (const PortTx& p : st.ports)
        ports.push_back({{"port", p.port}, {"to", p.to}, {"packets", p.packets}});
    return ports;
}
nlohmann::json waits_json(const std::vector<ThreadWaits>& waits) {
    nlohmann::json out = nlohmann::json::array();
    for (const ThreadWaits& w : waits)
        out.push_back({{"cpu", w.cpu}, {"wakeups", w.wakeups}, {"park_timeouts", w.park_timeouts}});
    return out;
}
}  // namespace

double StageReport::cycles_per_packet() const {
    const uint64_t n = kind == "source" ? out : in;
    return n == 0 ? 0.0 : double(cycles) / double(n);
}

double RunReport::mpps() const { return per_second(double(delivered), seconds) / 1e6; }
double RunReport::gbps_l2() const { return per_second(double(delivered_bytes) * 8, seconds) / 1e9; }
double RunReport::gbps_l1() const { return per_second(l1_bits(delivered_bytes, delivered), seconds) / 1e9; }
double RunReport::offered_mpps() const { return per_second(double(packets), offered_seconds) / 1e6; }
double RunReport::offered_gbps_l2() const { return per_second(double(bytes) * 8, offered_seconds) / 1e9; }
double RunReport::offered_gbps_l1() const { return per_second(l1_bits(bytes, packets), offered_seconds) / 1e9; }
bool RunReport::pools_full() const {
    for (const auto& p : pools)
        if (p.available != p.capacity) return false;
    return true;
}

std::string format_table(const RunReport& r) {
    std::string s = "app " + r.app;
    if (r.header.interrupted) s += r.header.cut_short ? " (interrupted, cut short)" : " (interrupted)";
    s += ": " + std::to_string(r.delivered) + " packets delivered in " + format_duration(r.seconds) + ": " +
         rates(r.delivered, r.delivered_bytes, r.seconds) + "\n";
    s += "  offered " + std::to_string(r.packets) + " packets (" + std::to_string(r.bytes) + " bytes) in " +
         format_duration(r.offered_seconds) + ": " + rates(r.packets, r.bytes, r.offered_seconds) + "; setup " +
         format_duration(r.setup_s) + " (outside the timed window)\n";

    TextTable t;
    using A = TextTable::Align;
    for (const char* h : {"node", "stage"}) t.add_column(h, A::Left);
    for (const char* h : {"tile", "cpu", "in", "out", "drops", "cyc/pkt", "busy"}) t.add_column(h, A::Right);
    // An app that branches lists its edges under the stage that sends on them.
    const bool branches = std::any_of(r.edges.begin(), r.edges.end(), [](const EdgeReport& e) { return e.branch; });
    const auto stage_row = [&t, &r, branches](const StageReport& st) {
        std::vector<std::string> lines = notes(st);
        for (const EdgeReport& e : r.edges)
            if (branches && e.stage == st.name)
                lines.push_back(e.from + "." + e.output + " -> " + e.to + ": " + std::to_string(e.packets) + " packets, " +
                                std::to_string(e.bytes) + " bytes, " + percent(e.share));
        t.add_row({st.name, st.stage, tile_xy(st.tile_x, st.tile_y), std::to_string(st.cpu), std::to_string(st.in),
                   std::to_string(st.out), std::to_string(st.drops), cycles(st.cycles_per_packet()),
                   percent(st.busy_fraction)},
                  lines);
    };
    // In graph order: each node's stages, or, for an emitter or collector (no stage, passes
    // every packet it takes), a row of its own.
    for (const auto& st : r.stages)
        if (st.node < 0) stage_row(st);
    for (size_t n = 0; n < r.tiles.size(); ++n) {
        const TileReport& tl = r.tiles[n];
        if (!tl.role.empty())
            t.add_row({tl.node, "(" + tl.role + ")", tile_xy(tl.tile_x, tl.tile_y), std::to_string(tl.cpu),
                       std::to_string(tl.packets), std::to_string(tl.packets), "0", "-", percent(tl.busy_fraction)});
        for (const auto& st : r.stages)
            if (st.node == static_cast<int>(n)) stage_row(st);
    }
    s += t.str();

    for (const auto& f : r.failures)
        s += "node '" + f.node + "' failed: " + f.error + " (" + std::to_string(f.dropped) +
             " packets in flight dropped)\n";
    for (const auto& tl : r.tiles)
        if (tl.stalled_ms > 0) s += "chaos: node '" + tl.node + "' stood still for " + format_duration(tl.stalled_ms / 1e3) + "\n";
    if (r.copies != 0) s += "copied " + std::to_string(r.copies) + " (tee: each copy counts as a packet emitted)\n";
    s += "delivered " + std::to_string(r.delivered) + ", dropped " + std::to_string(r.drops) + ", unaccounted " +
         std::to_string(r.unaccounted) + "; " + pools_line(r) + "\n";
    s += format_capture(r);
    if (r.lost_before_source != 0)
        s += "lost before source " + std::to_string(r.lost_before_source) + " (device: no mbuf, missed or errors)\n";
    if (r.header.cut_short) {
        uint64_t lost = 0;
        std::string nodes;
        for (const CutLoss& c : r.cut_losses) {
            lost += c.lost;
            nodes += (nodes.empty() ? "" : ", ") + c.node + " " + std::to_string(c.lost);
        }
        s += "cut short: a second signal ended the drain; " + std::to_string(lost) +
             " packets in flight were freed before reaching a sink (counted as dropped)" +
             (nodes.empty() ? std::string() : ": " + nodes) + "\n";
    } else if (r.header.interrupted) {
        s += "interrupted: the sources stopped early on a signal; what was in flight drained to the sinks\n";
    }
    s += format_latency(r.latency);
    return s;
}

nlohmann::json to_json(const RunReport& r) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& st : r.stages) {
        stages.push_back({{"name", st.name},
                          {"stage", st.stage},
                          {"kind", st.kind},
                          {"cpu", st.cpu},
                          {"tile", {st.tile_x, st.tile_y}},
                          {"in", st.in},
                          {"out", st.out},
                          {"drops", st.drops},
                          {"bytes", st.bytes},
                          {"busy_fraction", st.busy_fraction},
                          {"cycles_per_packet", st.cycles_per_packet()},
                          {"lost_before", st.lost_before},
                          {"drop_reasons", st.drop_reasons},
                          {"events", st.events},
                          {"output", st.output}});
        if (!st.ports.empty()) stages.back()["ports"] = ports_json(st);
    }
    nlohmann::json tiles = nlohmann::json::array();
    for (const auto& t : r.tiles)
        tiles.push_back({{"node", t.node},
                         {"role", t.role},
                         {"tile", {t.tile_x, t.tile_y}},
                         {"cpu", t.cpu},
                         {"busy_fraction", t.busy_fraction},
                         {"packets", t.packets},
                         {"bytes", t.bytes},
                         {"stalled_ms", t.stalled_ms}});
    nlohmann::json edges = nlohmann::json::array();
    for (const auto& e : r.edges)
        edges.push_back({{"from", e.from}, {"output", e.output}, {"to", e.to}, {"packets", e.packets}, {"bytes", e.bytes},
                         {"share", e.share}});
    nlohmann::json channels = nlohmann::json::array();
    for (const auto& c : r.channels)
        channels.push_back({{"from", c.from}, {"to", c.to}, {"transport", c.transport},
                            {"capacity", c.capacity}, {"hops", c.hops}});
    nlohmann::json pools = nlohmann::json::array();
    for (const auto& p : r.pools)
        pools.push_back({{"name", p.name}, {"capacity", p.capacity}, {"available", p.available}});
    nlohmann::json cut = {{"lost", 0}, {"nodes", nlohmann::json::array()}};
    for (const auto& c : r.cut_losses) {
        cut["lost"] = cut["lost"].get<uint64_t>() + c.lost;
        cut["nodes"].push_back({{"node", c.node}, {"lost", c.lost}});
    }
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : r.failures)
        failures.push_back({{"node", f.node}, {"error", f.error}, {"dropped", f.dropped}});
    const RunHeader& h = r.header;
    const nlohmann::json header = {{"version", h.version},
                                   {"config", h.config},
                                   {"captures", h.captures},
                                   {"overrides", h.overrides},
                                   {"topology", h.topology},
                                   {"start_time", h.start_time},
                                   {"interrupted", h.interrupted},
                                   {"cut_short", h.cut_short},
                                   {"exit_status", h.exit_status}};
    nlohmann::json j = {{"header", header},
            {"app", r.app},
            {"packets", r.packets},
            {"bytes", r.bytes},
            {"seconds", r.seconds},
            {"setup_s", r.setup_s},
            {"mpps", r.mpps()},
            {"gbps_l2", r.gbps_l2()},
            {"gbps_l1", r.gbps_l1()},
            {"offered_seconds", r.offered_seconds},
            {"offered_mpps", r.offered_mpps()},
            {"offered_gbps_l2", r.offered_gbps_l2()},
            {"offered_gbps_l1", r.offered_gbps_l1()},
            {"drops", r.drops},
            {"delivered", r.delivered},
            {"delivered_bytes", r.delivered_bytes},
            {"copies", r.copies},
            {"unaccounted", r.unaccounted},
            {"lost_before_source", r.lost_before_source},
            {"failures", failures},
            {"cut_short", cut},
            {"pools_full", r.pools_full()},
            {"threads", r.threads},
            {"thread_waits", waits_json(r.waits)},
            {"stages", stages},
            {"tiles", tiles},
            {"channels", channels},
            {"edges", edges},
            {"pools", pools}};
    add_latency_json(j, r.latency);
    add_capture_json(j, r);
    if (r.trace.requested != 0) j["trace"] = trace_json(r.trace);
    return j;
}

}  // namespace tp
