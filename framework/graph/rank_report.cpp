#include "framework/graph/rank_report.hpp"

#include <algorithm>

#include "framework/metrics/text_table.hpp"

namespace tp {

// What a rank sends rank 0 of its rows: every field, under its member's name (an exchange
// between ranks of one build, not a format users read; run_report.cpp writes that one).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PortTx, port, to, packets)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StageReport, name, stage, kind, node, cpu, tile_x, tile_y, in, out, drops, cycles, bytes,
                                   lost_before, busy_fraction, drop_reasons, events, output, output_is_device, ports)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TileReport, node, role, tile_x, tile_y, cpu, worker, busy_fraction, packets, bytes, stalled_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PoolReport, name, capacity, available)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FailureReport, node, error, dropped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CutLoss, node, lost)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LatencySummary, p50, p90, p99, p999, max, mean, samples)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LatencyBucket, upper_us, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NodeResidenceReport, node, queue_wait, process)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LatencyReport, mode, tsc_hz, end_to_end, buckets, nodes)

namespace {

using nlohmann::json;

// The tile of link `name`'s end with a role starting `role` in a rank's summary; nullptr if none.
const json* link_end(const json& summary, const std::string& name, const std::string& role) {
    for (const json& t : summary["tiles"])
        if (t["node"] == name && t["role"].get<std::string>().rfind(role, 0) == 0) return &t;
    return nullptr;
}

}  // namespace

json rank_summary(const RunReport& r, int rank, const std::string& host) {
    json j{{"rank", rank}, {"host", host}, {"packets", r.packets}, {"bytes", r.bytes}, {"drops", r.drops},
           {"delivered", r.delivered}, {"delivered_bytes", r.delivered_bytes}, {"copies", r.copies},
           {"lost_before_source", r.lost_before_source}, {"first_emit_ns", r.first_emit_ns},
           {"last_emit_ns", r.last_emit_ns}, {"end_ns", r.end_ns}, {"threads", r.threads}, {"setup_s", r.setup_s},
           {"interrupted", r.header.interrupted}, {"signal", r.header.signal}, {"cut_short", r.header.cut_short}};
    j["stages"] = r.stages;
    j["tiles"] = r.tiles;
    j["pools"] = r.pools;
    j["failures"] = r.failures;
    j["cut_losses"] = r.cut_losses;
    j["latency"] = r.latency;
    return j;
}

RanksReport merge_ranks(RunReport& r, const std::vector<json>& summaries, const RankLayout& layout) {
    RanksReport rr;
    r.packets = r.bytes = r.drops = r.delivered = r.delivered_bytes = r.copies = r.lost_before_source = 0;
    r.threads = 0;
    int64_t first = 0, last_emit = 0, end = 0;
    // Every failure names its rank (rank 0's too: the report lists them all together).
    for (FailureReport& f : r.failures) f.error = "rank 0: " + f.error;
    for (const json& s : summaries) {
        const int rank = s["rank"];
        RankRow row;
        row.rank = rank;
        row.host = s["host"];
        row.packets = s["packets"];
        row.delivered = s["delivered"];
        row.drops = s["drops"];
        row.threads = s["threads"];
        row.failures = s["failures"].size();
        r.packets += row.packets;
        r.bytes += s["bytes"].get<uint64_t>();
        r.drops += row.drops;
        r.delivered += row.delivered;
        r.delivered_bytes += s["delivered_bytes"].get<uint64_t>();
        r.copies += s["copies"].get<uint64_t>();
        r.lost_before_source += s["lost_before_source"].get<uint64_t>();
        r.threads += row.threads;
        r.setup_s = std::max(r.setup_s, s["setup_s"].get<double>());
        const int64_t f = s["first_emit_ns"], l = s["last_emit_ns"], e = s["end_ns"];
        if (f != 0 && (first == 0 || f < first)) first = f;
        last_emit = std::max(last_emit, l);
        end = std::max(end, e);
        r.header.interrupted = r.header.interrupted || s["interrupted"].get<bool>();
        r.header.signal = std::max(r.header.signal, s["signal"].get<int>());
        r.header.cut_short = r.header.cut_short || s["cut_short"].get<bool>();
        const std::string prefix = rank == 0 ? "" : "rank" + std::to_string(rank) + "/";
        for (PoolReport pool : s["pools"].get<std::vector<PoolReport>>()) {
            pool.name = prefix + pool.name;
            row.pools_full = row.pools_full && pool.available == pool.capacity;
            if (rank != 0) r.pools.push_back(pool);
        }
        rr.ranks.push_back(row);
        if (rank == 0) continue;  // r holds rank 0's own rows already
        const int offset = static_cast<int>(r.tiles.size());
        for (TileReport t : s["tiles"].get<std::vector<TileReport>>()) r.tiles.push_back(std::move(t));
        for (StageReport st : s["stages"].get<std::vector<StageReport>>()) {
            if (st.node >= 0) st.node += offset;  // its node's row in the merged tiles
            r.stages.push_back(std::move(st));
        }
        for (FailureReport f : s["failures"].get<std::vector<FailureReport>>()) {
            f.error = "rank " + std::to_string(rank) + ": " + f.error;
            r.failures.push_back(std::move(f));
        }
        for (CutLoss c : s["cut_losses"].get<std::vector<CutLoss>>()) r.cut_losses.push_back(std::move(c));
        // Every rank runs the app's latency rule; a sink on any rank takes samples.
        if (r.latency.mode != "off") merge_latency(r.latency, s["latency"].get<LatencyReport>());
    }
    // On the system clock: the ranks' TSCs need not agree (other hosts).
    if (first != 0) {
        const int64_t stop = end != 0 ? end : last_emit;
        r.seconds = stop > first ? double(stop - first) / 1e9 : 0.0;
        r.offered_seconds = last_emit > first ? double(last_emit - first) / 1e9 : 0.0;
    }
    r.first_emit_ns = first, r.last_emit_ns = last_emit, r.end_ns = end;
    r.unaccounted = int64_t(r.packets + r.copies) - int64_t(r.delivered) - int64_t(r.drops);
    for (size_t i = 0; i < layout.links.size(); ++i) {
        const RankLink& l = layout.links[i];
        RankLinkRow row{l.from, l.to, l.from_rank, l.to_rank, "", 0, 0, 0, 0};
        const std::string name = rank_link_name(static_cast<int>(i), l.from, l.to);
        if (const json* t = link_end(summaries.at(static_cast<size_t>(l.from_rank)), name, "send")) {
            row.sent = (*t)["packets"], row.sent_bytes = (*t)["bytes"];
            const std::string role = (*t)["role"];  // "send to rank 1, lent"
            if (const size_t comma = role.rfind(", "); comma != std::string::npos) row.kind = role.substr(comma + 2);
        }
        if (const json* t = link_end(summaries.at(static_cast<size_t>(l.to_rank)), name, "receive"))
            row.received = (*t)["packets"], row.received_bytes = (*t)["bytes"];
        rr.links.push_back(row);
    }
    return rr;
}

std::string format_ranks(const RanksReport& rr) {
    TextTable t;
    using A = TextTable::Align;
    t.add_column("rank", A::Right);
    t.add_column("host", A::Left);
    for (const char* h : {"emitted", "delivered", "drops", "threads"}) t.add_column(h, A::Right);
    t.add_column("pools", A::Left);
    for (const RankRow& r : rr.ranks)
        t.add_row({std::to_string(r.rank), r.host, std::to_string(r.packets), std::to_string(r.delivered), std::to_string(r.drops),
                   std::to_string(r.threads), std::string(r.pools_full ? "full" : "NOT FULL") + (r.failures != 0 ? ", failed" : "")});
    std::string s = "ranks:\n" + t.str();
    if (rr.links.empty()) return s;
    TextTable l;
    l.add_column("link between ranks", A::Left);
    l.add_column("kind", A::Left);
    for (const char* h : {"sent", "sent bytes", "received", "received bytes"}) l.add_column(h, A::Right);
    for (const RankLinkRow& k : rr.links)
        l.add_row({k.from + " (rank " + std::to_string(k.from_rank) + ") -> " + k.to + " (rank " + std::to_string(k.to_rank) + ")",
                   k.kind, std::to_string(k.sent), std::to_string(k.sent_bytes), std::to_string(k.received), std::to_string(k.received_bytes)});
    return s + l.str();
}

void add_ranks_json(json& j, const RanksReport& rr) {
    j["ranks"] = json::array();
    for (const RankRow& r : rr.ranks)
        j["ranks"].push_back({{"rank", r.rank}, {"host", r.host}, {"packets", r.packets}, {"delivered", r.delivered},
                              {"drops", r.drops}, {"threads", r.threads}, {"pools_full", r.pools_full}, {"failures", r.failures}});
    j["rank_links"] = json::array();
    for (const RankLinkRow& k : rr.links)
        j["rank_links"].push_back({{"from", k.from}, {"to", k.to}, {"from_rank", k.from_rank}, {"to_rank", k.to_rank},
                                   {"kind", k.kind}, {"sent", k.sent}, {"sent_bytes", k.sent_bytes}, {"received", k.received},
                                   {"received_bytes", k.received_bytes}});
}

}  // namespace tp
