#include "framework/metrics/telemetry.hpp"

#include <rte_telemetry.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

namespace tp {

namespace {

std::mutex g_source_mutex;                  // guards g_source; never taken by a tile
const LiveSource* g_source = nullptr;  // the published run, or none
std::once_flag g_registered;

std::optional<LiveView> view_now() {
    // Called with g_source_mutex held.
    if (g_source == nullptr) return std::nullopt;
    return (*g_source)();
}

std::string decimal(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

const char* state_of(const std::optional<LiveView>& v) {
    if (!v) return "idle";
    if (!v->started) return "starting";
    return v->finished ? "done" : "running";
}

// One array of `type` per field, filled by `add` for each entry, then put in `d` under `name`.
// Arrays hold at most RTE_TEL_MAX_ARRAY_ENTRIES entries: the rest is left out.
template <typename Items, typename Add>
void add_column(rte_tel_data* d, const char* name, rte_tel_value_type type, const Items& items, Add add) {
    rte_tel_data* col = rte_tel_data_alloc();
    if (col == nullptr) return;
    rte_tel_data_start_array(col, type);
    size_t n = 0;
    for (const auto& item : items) {
        if (n++ == RTE_TEL_MAX_ARRAY_ENTRIES) break;
        add(col, item);
    }
    if (rte_tel_data_add_dict_container(d, name, col, 0) != 0) rte_tel_data_free(col);
}

void add_str(rte_tel_data* c, const std::string& s) { rte_tel_data_add_array_string(c, s.c_str()); }

int handle_stats(const char*, const char*, rte_tel_data* d) {
    std::lock_guard<std::mutex> lock(g_source_mutex);
    const std::optional<LiveView> v = view_now();
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_string(d, "state", state_of(v));
    if (!v) return 0;
    const RunReport& r = v->report;
    rte_tel_data_add_dict_string(d, "app", r.app.c_str());
    rte_tel_data_add_dict_string(d, "seconds", decimal(r.seconds, 3).c_str());
    rte_tel_data_add_dict_u64(d, "packets", r.packets);
    rte_tel_data_add_dict_u64(d, "bytes", r.bytes);
    rte_tel_data_add_dict_u64(d, "delivered", r.delivered);
    rte_tel_data_add_dict_u64(d, "delivered_bytes", r.delivered_bytes);
    rte_tel_data_add_dict_u64(d, "drops", r.drops);
    rte_tel_data_add_dict_u64(d, "lost_before_source", r.lost_before_source);
    rte_tel_data_add_dict_u64(d, "pps", static_cast<uint64_t>(r.mpps() * 1e6));
    rte_tel_data_add_dict_string(d, "mpps", decimal(r.mpps(), 3).c_str());
    rte_tel_data_add_dict_string(d, "gbps_l2", decimal(r.gbps_l2(), 3).c_str());
    rte_tel_data_add_dict_string(d, "gbps_l1", decimal(r.gbps_l1(), 3).c_str());
    rte_tel_data_add_dict_string(d, "offered_mpps", decimal(r.offered_mpps(), 3).c_str());
    uint64_t mbufs = 0, available = 0;
    for (const PoolReport& p : r.pools) mbufs += p.capacity, available += p.available;
    rte_tel_data_add_dict_u64(d, "pool_mbufs", mbufs);
    rte_tel_data_add_dict_u64(d, "pool_available", available);
    return 0;
}

void add_node(rte_tel_data* d, const StageReport& s) {
    rte_tel_data_add_dict_string(d, "name", s.name.c_str());
    rte_tel_data_add_dict_string(d, "stage", s.stage.c_str());
    rte_tel_data_add_dict_u64(d, "in", s.in);
    rte_tel_data_add_dict_u64(d, "out", s.out);
    rte_tel_data_add_dict_u64(d, "drops", s.drops);
    rte_tel_data_add_dict_u64(d, "bytes", s.bytes);
    rte_tel_data_add_dict_string(d, "busy_fraction", decimal(s.busy_fraction, 4).c_str());
}

int handle_nodes(const char*, const char* params, rte_tel_data* d) {
    std::lock_guard<std::mutex> lock(g_source_mutex);
    const std::optional<LiveView> v = view_now();
    static const std::vector<StageReport> kNone;
    const std::vector<StageReport>& stages = v ? v->report.stages : kNone;
    if (params != nullptr && *params != '\0') {
        for (const StageReport& s : stages)
            if (s.name == params) {
                rte_tel_data_start_dict(d);
                add_node(d, s);
                return 0;
            }
        return -EINVAL;  // DPDK answers null
    }
    rte_tel_data_start_dict(d);
    add_column(d, "name", RTE_TEL_STRING_VAL, stages, [](rte_tel_data* c, const StageReport& s) { add_str(c, s.name); });
    add_column(d, "stage", RTE_TEL_STRING_VAL, stages, [](rte_tel_data* c, const StageReport& s) { add_str(c, s.stage); });
    add_column(d, "in", RTE_TEL_U64_VAL, stages, [](rte_tel_data* c, const StageReport& s) { rte_tel_data_add_array_u64(c, s.in); });
    add_column(d, "out", RTE_TEL_U64_VAL, stages, [](rte_tel_data* c, const StageReport& s) { rte_tel_data_add_array_u64(c, s.out); });
    add_column(d, "drops", RTE_TEL_U64_VAL, stages, [](rte_tel_data* c, const StageReport& s) { rte_tel_data_add_array_u64(c, s.drops); });
    add_column(d, "bytes", RTE_TEL_U64_VAL, stages, [](rte_tel_data* c, const StageReport& s) { rte_tel_data_add_array_u64(c, s.bytes); });
    add_column(d, "busy_fraction", RTE_TEL_STRING_VAL, stages, [](rte_tel_data* c, const StageReport& s) { add_str(c, decimal(s.busy_fraction, 4)); });
    return 0;
}

int handle_tiles(const char*, const char*, rte_tel_data* d) {
    std::lock_guard<std::mutex> lock(g_source_mutex);
    const std::optional<LiveView> v = view_now();
    static const std::vector<TileReport> kNone;
    const std::vector<TileReport>& tiles = v ? v->report.tiles : kNone;
    rte_tel_data_start_dict(d);
    add_column(d, "node", RTE_TEL_STRING_VAL, tiles, [](rte_tel_data* c, const TileReport& t) { add_str(c, t.node); });
    add_column(d, "x", RTE_TEL_INT_VAL, tiles, [](rte_tel_data* c, const TileReport& t) { rte_tel_data_add_array_int(c, t.tile_x); });
    add_column(d, "y", RTE_TEL_INT_VAL, tiles, [](rte_tel_data* c, const TileReport& t) { rte_tel_data_add_array_int(c, t.tile_y); });
    add_column(d, "cpu", RTE_TEL_INT_VAL, tiles, [](rte_tel_data* c, const TileReport& t) { rte_tel_data_add_array_int(c, t.cpu); });
    add_column(d, "busy_fraction", RTE_TEL_STRING_VAL, tiles, [](rte_tel_data* c, const TileReport& t) { add_str(c, decimal(t.busy_fraction, 4)); });
    return 0;
}

int handle_channels(const char*, const char*, rte_tel_data* d) {
    std::lock_guard<std::mutex> lock(g_source_mutex);
    const std::optional<LiveView> v = view_now();
    std::vector<size_t> index;  // channel i, with its queued count at v->queued[i]
    if (v)
        for (size_t i = 0; i < v->report.channels.size(); ++i) index.push_back(i);
    const auto ch = [&](size_t i) -> const ChannelReport& { return v->report.channels[i]; };
    rte_tel_data_start_dict(d);
    add_column(d, "from", RTE_TEL_STRING_VAL, index, [&](rte_tel_data* c, size_t i) { add_str(c, ch(i).from); });
    add_column(d, "to", RTE_TEL_STRING_VAL, index, [&](rte_tel_data* c, size_t i) { add_str(c, ch(i).to); });
    add_column(d, "transport", RTE_TEL_STRING_VAL, index, [&](rte_tel_data* c, size_t i) { add_str(c, ch(i).transport); });
    add_column(d, "capacity", RTE_TEL_U64_VAL, index, [&](rte_tel_data* c, size_t i) { rte_tel_data_add_array_u64(c, ch(i).capacity); });
    add_column(d, "hops", RTE_TEL_INT_VAL, index, [&](rte_tel_data* c, size_t i) { rte_tel_data_add_array_int(c, ch(i).hops); });
    add_column(d, "queued", RTE_TEL_INT_VAL, index, [&](rte_tel_data* c, size_t i) {
        rte_tel_data_add_array_int(c, i < v->queued.size() ? static_cast<int>(v->queued[i]) : -1);
    });
    return 0;
}

int handle_latency(const char*, const char*, rte_tel_data* d) {
    std::lock_guard<std::mutex> lock(g_source_mutex);
    const std::optional<LiveView> v = view_now();
    rte_tel_data_start_dict(d);
    if (!v) return 0;
    const LatencyReport& l = v->report.latency;
    rte_tel_data_add_dict_string(d, "mode", l.mode.c_str());
    rte_tel_data_add_dict_u64(d, "samples", l.end_to_end.samples);
    const LatencySummary& e = l.end_to_end;
    for (const auto& [name, value] : {std::pair{"p50_us", e.p50}, {"p90_us", e.p90}, {"p99_us", e.p99},
                                      {"p999_us", e.p999}, {"max_us", e.max}, {"mean_us", e.mean}})
        rte_tel_data_add_dict_string(d, name, decimal(value, 3).c_str());
    return 0;
}

int handle_edges(const char*, const char*, rte_tel_data* d) {
    std::lock_guard<std::mutex> lock(g_source_mutex);
    const std::optional<LiveView> v = view_now();
    static const std::vector<EdgeReport> kNone;
    const std::vector<EdgeReport>& edges = v ? v->report.edges : kNone;
    rte_tel_data_start_dict(d);
    add_column(d, "from", RTE_TEL_STRING_VAL, edges, [](rte_tel_data* c, const EdgeReport& e) { add_str(c, e.from); });
    add_column(d, "output", RTE_TEL_STRING_VAL, edges, [](rte_tel_data* c, const EdgeReport& e) { add_str(c, e.output); });
    add_column(d, "to", RTE_TEL_STRING_VAL, edges, [](rte_tel_data* c, const EdgeReport& e) { add_str(c, e.to); });
    add_column(d, "packets", RTE_TEL_U64_VAL, edges, [](rte_tel_data* c, const EdgeReport& e) { rte_tel_data_add_array_u64(c, e.packets); });
    add_column(d, "bytes", RTE_TEL_U64_VAL, edges, [](rte_tel_data* c, const EdgeReport& e) { rte_tel_data_add_array_u64(c, e.bytes); });
    add_column(d, "share", RTE_TEL_STRING_VAL, edges, [](rte_tel_data* c, const EdgeReport& e) { add_str(c, decimal(e.share, 4)); });
    return 0;
}

void register_endpoints() {
    rte_telemetry_register_cmd(kTelemetryEndpoints[0], handle_stats,
                               "Returns the tilepipe run's totals and rates so far. Takes no parameters");
    rte_telemetry_register_cmd(kTelemetryEndpoints[1], handle_nodes,
                               "Returns per-node in, out, drops, bytes, busy_fraction. Parameters: none, or a node name");
    rte_telemetry_register_cmd(kTelemetryEndpoints[2], handle_tiles,
                               "Returns each tile's position, CPU and busy share. Takes no parameters");
    rte_telemetry_register_cmd(kTelemetryEndpoints[3], handle_channels,
                               "Returns each channel's ends, transport, capacity, hops and items queued. Takes no parameters");
    rte_telemetry_register_cmd(kTelemetryEndpoints[4], handle_latency,
                               "Returns the end-to-end latency so far: mode, samples, percentiles in us. Takes no parameters");
    rte_telemetry_register_cmd(kTelemetryEndpoints[5], handle_edges,
                               "Returns each edge of the app (from, output, to) with its packets, bytes and share. Takes no parameters");
}

}  // namespace

LiveTelemetry::LiveTelemetry(LiveSource source) : source_(std::move(source)) {
    std::call_once(g_registered, register_endpoints);
    std::lock_guard<std::mutex> lock(g_source_mutex);
    g_source = &source_;
}

LiveTelemetry::~LiveTelemetry() {
    std::lock_guard<std::mutex> lock(g_source_mutex);  // waits for a handler still reading the run
    if (g_source == &source_) g_source = nullptr;
}

}  // namespace tp
