// The report of an app run as several ranks: each rank summarises its part (rank_summary),
// rank 0 merges the summaries into its own report (merge_ranks) and prints one report.
//
// Merged: the counts are summed over the ranks (emitted at the sources, delivered at the
// sinks, drops, copies), so `delivered + drops + unaccounted = emitted` holds across ranks;
// the timed window runs on the system clock from the first emit on any rank to the last packet
// a sink on any rank took; the stages, tiles, pools (`rankN/...` for N > 0), failures (their
// error prefixed `rank N:`) and cut losses of every rank are listed, every rank's pools
// must end full, and the latency samples of every rank's sinks (and, with `latency: all`, its
// nodes) are merged. RanksReport adds a row per rank and per link between ranks (what its
// sending end sent, what its receiving end handed on).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "framework/graph/rank_plan.hpp"
#include "framework/metrics/run_report.hpp"

namespace tp {

struct RankRow {
    int rank = 0;
    std::string host;
    uint64_t packets = 0, delivered = 0, drops = 0;
    size_t threads = 0;
    bool pools_full = true;
    size_t failures = 0;
};

struct RankLinkRow {
    std::string from, to;  // graph nodes
    int from_rank = 0, to_rank = 0;
    std::string kind;      // "lent" or "messages" (its sending end's tile role says)
    uint64_t sent = 0, sent_bytes = 0;          // taken by the sending end
    uint64_t received = 0, received_bytes = 0;  // handed on by the receiving end
};

struct RanksReport {
    std::vector<RankRow> ranks;
    std::vector<RankLinkRow> links;
};

// What rank `rank` on `host` tells rank 0 about its part of the run.
nlohmann::json rank_summary(const RunReport& r, int rank, const std::string& host);

// Merges every rank's summary (rank order, rank 0's included) into `r`, rank 0's own report.
RanksReport merge_ranks(RunReport& r, const std::vector<nlohmann::json>& summaries, const RankLayout& layout);

// The table's section for the ranks, and the report's JSON with `ranks` and `rank_links` added.
std::string format_ranks(const RanksReport& rr);
void add_ranks_json(nlohmann::json& j, const RanksReport& rr);

}  // namespace tp
