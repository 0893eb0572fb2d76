#include "framework/metrics/run_report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace tp {

namespace {
// Preamble (7) + start delimiter (1) + inter-frame gap (12) + FCS (4): bytes a frame costs on
// the wire beyond what a capture holds.
constexpr uint64_t kL1Overhead = 24;

// One line per output port of a sink that sends by port: "    port 1 -> net_null1: 40 packets".
std::string format_ports(const StageReport& st) {
    std::string s;
    for (const PortTx& p : st.ports)
        s += "    port " + std::to_string(p.port) + " -> " + p.to + ": " + std::to_string(p.packets) + " packets\n";
    return s;
}

nlohmann::json ports_json(const StageReport& st) {
    nlohmann::json ports = nlohmann::json::array();
    for (const PortTx& p : st.ports)
        ports.push_back({{"port", p.port}, {"to", p.to}, {"packets", p.packets}});
    return ports;
}
}

double StageReport::cycles_per_packet() const {
    const uint64_t n = kind == "source" ? out : in;
    return n == 0 ? 0.0 : double(cycles) / double(n);
}

double RunReport::mpps() const { return seconds > 0 ? double(packets) / seconds / 1e6 : 0.0; }
double RunReport::gbps_l2() const { return seconds > 0 ? double(bytes) * 8 / seconds / 1e9 : 0.0; }
double RunReport::gbps_l1() const {
    return seconds > 0 ? double(bytes + packets * kL1Overhead) * 8 / seconds / 1e9 : 0.0;
}
bool RunReport::pools_full() const {
    for (const auto& p : pools)
        if (p.available != p.capacity) return false;
    return true;
}

std::string format_table(const RunReport& r) {
    std::string s;
    char line[256];
    std::snprintf(line, sizeof line, "app %s: %llu packets, %llu bytes in %.3f s: %.3f Mpps, %.3f Gb/s (L2), %.3f Gb/s (L1)\n",
                  r.app.c_str(), (unsigned long long)r.packets, (unsigned long long)r.bytes, r.seconds,
                  r.mpps(), r.gbps_l2(), r.gbps_l1());
    s += line;
    std::snprintf(line, sizeof line, "%-16s %-10s %7s %4s %12s %12s %10s %8s %6s\n", "node", "stage", "tile",
                  "cpu", "in", "out", "drops", "cyc/pkt", "busy");
    s += line;
    for (const auto& st : r.stages) {
        const std::string tile = "[" + std::to_string(st.tile_x) + "," + std::to_string(st.tile_y) + "]";
        std::snprintf(line, sizeof line, "%-16s %-10s %7s %4d %12llu %12llu %10llu %8.1f %5.0f%%\n",
                      st.name.c_str(), st.stage.c_str(), tile.c_str(), st.cpu, (unsigned long long)st.in,
                      (unsigned long long)st.out, (unsigned long long)st.drops, st.cycles_per_packet(),
                      st.busy * 100);
        s += line;
        for (const auto& [why, n] : st.drop_reasons)
            if (n != 0) s += "    drop " + why + ": " + std::to_string(n) + "\n";
        for (const auto& [what, n] : st.events)
            if (n != 0) s += "    " + what + ": " + std::to_string(n) + "\n";
        if (st.lost_before != 0) s += "    lost before source: " + std::to_string(st.lost_before) + "\n";
        s += format_ports(st);
    }
    for (const auto& f : r.failures)
        s += "node '" + f.node + "' failed: " + f.error + " (" + std::to_string(f.dropped) +
             " packets in flight dropped)\n";
    std::snprintf(line, sizeof line, "delivered %llu, dropped %llu, unaccounted %lld; pools %s\n",
                  (unsigned long long)r.delivered, (unsigned long long)r.drops, (long long)r.unaccounted,
                  r.pools_full() ? "full" : "NOT FULL (mbufs leaked)");
    s += line;
    if (r.lost_before_source != 0)
        s += "lost before source " + std::to_string(r.lost_before_source) + " (device: no mbuf, missed or errors)\n";
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
                          {"busy", st.busy},
                          {"cycles_per_packet", st.cycles_per_packet()},
                          {"lost_before", st.lost_before},
                          {"drop_reasons", st.drop_reasons},
                          {"events", st.events}});
        if (!st.ports.empty()) stages.back()["ports"] = ports_json(st);
    }
    nlohmann::json tiles = nlohmann::json::array();
    for (const auto& t : r.tiles)
        tiles.push_back({{"node", t.node}, {"tile", {t.tile_x, t.tile_y}}, {"cpu", t.cpu}, {"busy", t.busy}});
    nlohmann::json channels = nlohmann::json::array();
    for (const auto& c : r.channels)
        channels.push_back({{"from", c.from}, {"to", c.to}, {"transport", c.transport},
                            {"capacity", c.capacity}, {"hops", c.hops}});
    nlohmann::json pools = nlohmann::json::array();
    for (const auto& p : r.pools)
        pools.push_back({{"name", p.name}, {"capacity", p.capacity}, {"available", p.available}});
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : r.failures)
        failures.push_back({{"node", f.node}, {"error", f.error}, {"dropped", f.dropped}});
    nlohmann::json j = {{"app", r.app},
            {"packets", r.packets},
            {"bytes", r.bytes},
            {"seconds", r.seconds},
            {"mpps", r.mpps()},
            {"gbps_l2", r.gbps_l2()},
            {"gbps_l1", r.gbps_l1()},
            {"drops", r.drops},
            {"delivered", r.delivered},
            {"unaccounted", r.unaccounted},
            {"lost_before_source", r.lost_before_source},
            {"failures", failures},
            {"pools_full", r.pools_full()},
            {"topology", r.topology},
            {"threads", r.threads},
            {"stages", stages},
            {"tiles", tiles},
            {"channels", channels},
            {"pools", pools}};
    add_latency_json(j, r.latency);
    return j;
}

}  // namespace tp
