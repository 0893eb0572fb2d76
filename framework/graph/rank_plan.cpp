#include "framework/graph/rank_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace tp {

namespace {

struct GivenRank {
    int rank = 0;
    Location where;
    bool given = false;
};

GivenRank pattern_rank(const PatternConfig& f) {
    return f.rank ? GivenRank{*f.rank, f.rank_where, true} : GivenRank{0, f.where, false};
}

// The rank graph node `g` runs on, and where the config said so.
GivenRank rank_of(const AppConfig& app, const GraphNode& g) {
    if (!g.stages.empty()) {
        // A node a farm's emitter or collector folded into keeps its own rank.
        const NodeConfig& nc = app.pipeline[g.stages.front()];
        if (nc.pattern < 0) return nc.rank ? GivenRank{*nc.rank, nc.rank_where, true} : GivenRank{0, nc.where, false};
        const PatternConfig& f = app.patterns[static_cast<size_t>(nc.pattern)];
        if (!f.ranks.empty()) return GivenRank{f.ranks[g.worker % f.ranks.size()], f.ranks_where, true};
        return pattern_rank(f);
    }
    if (g.pattern >= 0) return pattern_rank(app.patterns[static_cast<size_t>(g.pattern)]);
    for (const PatternConfig& f : app.patterns)  // a farm's emitter or collector tile
        if (g.name == f.name + ".emitter" || g.name == f.name + ".collector") return pattern_rank(f);
    return GivenRank{0, g.where, false};
}

// A worker's stages share its packets on one tile or one pipeline of tiles: one rank.
void check_worker_stages(const AppConfig& app) {
    for (const NodeConfig& nc : app.pipeline) {
        if (nc.pattern < 0 || !nc.rank) continue;
        const PatternConfig& f = app.patterns[static_cast<size_t>(nc.pattern)];
        const std::string kind = f.map ? "map '" : "farm '";
        throw LocatedError(nc.rank_where, "'" + nc.name + "' is a stage of " + kind + f.name +
                                              "''s workers, whose chain stays on one rank (no mpi link inside a worker): give the " +
                                              (f.map ? "map `rank:`" : "farm `rank:`, or `ranks: [..]` to spread its workers"));
    }
}

}  // namespace

MpirunEnv mpirun_env() {
    const auto number = [](const char* name, int fallback) {
        const char* v = std::getenv(name);
        return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
    };
    MpirunEnv e;
    e.launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
    e.size = std::max(1, number("OMPI_COMM_WORLD_SIZE", 1));
    e.rank = number("OMPI_COMM_WORLD_RANK", number("PMIX_RANK", 0));
    return e;
}

RankLayout plan_ranks(const AppConfig& app, const AppGraph& graph) {
    check_worker_stages(app);
    RankLayout l;
    int highest = -1;
    for (const GraphNode& g : graph.nodes) {
        const GivenRank r = rank_of(app, g);
        l.rank_of_node.push_back(r.rank);
        l.named = l.named || r.given;
        if (r.rank > highest) highest = r.rank, l.highest_where = r.where;
    }
    l.ranks = highest + 1;
    for (size_t e = 0; e < graph.edges.size(); ++e) {
        const GraphEdge& edge = graph.edges[e];
        const int a = l.rank_of_node[edge.from], b = l.rank_of_node[edge.to];
        if (a != b) l.links.push_back(RankLink{e, a, b, graph.nodes[edge.from].name, graph.nodes[edge.to].name});
    }
    return l;
}

void check_rank_layout(const AppConfig& app, const AppGraph& graph, const RankLayout& l) {
    if (l.ranks == 1) return;
    // Ranks run 0..R-1 and each joins the others: a rank without nodes or links would wait forever.
    for (int r = 0; r < l.ranks; ++r) {
        const auto first = std::find(l.rank_of_node.begin(), l.rank_of_node.end(), r);
        if (first == l.rank_of_node.end())
            throw LocatedError(l.highest_where, "rank " + std::to_string(r) + " holds no node: the app names ranks up to " +
                                                    std::to_string(l.ranks - 1) + " here, and every rank from 0 to it needs a node");
        const bool linked = std::any_of(l.links.begin(), l.links.end(),
                                        [r](const RankLink& k) { return k.from_rank == r || k.to_rank == r; });
        if (!linked) {
            const GraphNode& g = graph.nodes[static_cast<size_t>(first - l.rank_of_node.begin())];
            throw LocatedError(rank_of(app, g).where, "'" + g.name + "' is on rank " + std::to_string(r) +
                                                          ", which has no link to the other ranks: its nodes must be wired to theirs");
        }
    }
}

void check_world(const AppConfig& app, const RankLayout& layout, int world, bool under_mpirun) {
    const std::string highest = std::to_string(layout.ranks - 1);
    if (!under_mpirun && layout.ranks > 1)
        throw LocatedError(layout.highest_where, "rank " + highest + " needs mpirun: run `mpirun -np " +
                                                     std::to_string(layout.ranks) + " tilepipe run ...` (without mpirun an app is one process, rank 0)");
    // mpirun -np 1 runs an app naming no rank as without mpirun; one naming ranks is refused
    // below as for any world too small, not run whole in the one process.
    if (!under_mpirun || (world == 1 && layout.ranks <= 1)) return;
    if (!layout.named)
        throw LocatedError(Location{app.file, 1, 1},
                           "mpirun started " + std::to_string(world) +
                               " processes, but the app names no rank: give its nodes or farms `rank: N` (or run it without mpirun)");
    if (world < layout.ranks)
        throw LocatedError(layout.highest_where, "rank " + highest + " does not exist: mpirun started " + std::to_string(world) +
                                                     " process(es), ranks 0 to " + std::to_string(world - 1) +
                                                     " (start it with -np " + std::to_string(layout.ranks) + ")");
    if (world > layout.ranks)
        throw LocatedError(layout.highest_where, "the highest rank the app names is " + highest + ", but mpirun started " +
                                                     std::to_string(world) + " processes: start it with -np " +
                                                     std::to_string(layout.ranks) + " (a rank without nodes is refused)");
}

std::string rank_link_name(int index, const std::string& from, const std::string& to) {
    return "mpi" + std::to_string(index) + ":" + from + "->" + to;
}

RankPart plan_rank_part(const AppConfig& app, const AppPlan& full, const RankLayout& layout, int rank) {
    RankPart part{app, {}};
    const AppGraph& g = full.graph;
    constexpr size_t kNone = std::numeric_limits<size_t>::max();
    std::vector<size_t> local_of(g.nodes.size(), kNone);
    AppGraph local;
    for (size_t n = 0; n < g.nodes.size(); ++n)
        if (layout.rank_of_node[n] == rank) local_of[n] = local.nodes.size(), local.nodes.push_back(g.nodes[n]);
    // A collector holds back only a numbering node of its own rank.
    for (GraphNode& node : local.nodes)
        if (node.numbered_by >= 0) {
            const size_t at = local_of[static_cast<size_t>(node.numbered_by)];
            node.numbered_by = at == kNone ? -1 : static_cast<int>(at);
        }
    // Every edge in its place of the order: a node's outputs and inputs keep their order
    // (dispatch, branches and the collector's inputs read them by position).
    size_t link = 0;
    for (size_t e = 0; e < g.edges.size(); ++e) {
        GraphEdge edge = g.edges[e];
        const bool sends = layout.rank_of_node[edge.from] == rank, receives = layout.rank_of_node[edge.to] == rank;
        if (sends && receives) {
            edge.from = local_of[edge.from], edge.to = local_of[edge.to];
            local.edges.push_back(edge);
            continue;
        }
        const bool crosses = layout.rank_of_node[edge.from] != layout.rank_of_node[edge.to];
        const int index = crosses ? static_cast<int>(link++) : -1;
        if (!sends && !receives) continue;
        GraphNode end;
        end.role = sends ? NodeRole::RankSend : NodeRole::RankReceive;
        end.name = rank_link_name(index, g.nodes[edge.from].name, g.nodes[edge.to].name);
        end.rank_link = index;
        end.peer_rank = sends ? layout.rank_of_node[edge.to] : layout.rank_of_node[edge.from];
        end.load = 0.2 * edge.weight;  // a hop's work per packet, as a farm's emitter
        end.where = g.nodes[sends ? edge.to : edge.from].where;
        const size_t at = local.nodes.size();
        local.nodes.push_back(std::move(end));
        if (sends) {
            edge.from = local_of[edge.from], edge.to = at;
        } else {
            edge.from = at, edge.to = local_of[edge.to];
            edge.output = -1;  // the branch is the sender's
        }
        local.edges.push_back(edge);
    }
    // A chaos stall names one node of the whole app: the rank that runs it stalls it.
    if (!app.chaos.stall.empty()) {
        const auto it = std::find_if(local.nodes.begin(), local.nodes.end(), [&](const GraphNode& n) { return n.name == app.chaos.stall; });
        if (it == local.nodes.end()) part.app.chaos.stall.clear();
    }
    part.plan = place_app_graph(part.app, std::move(local));
    return part;
}

}  // namespace tp
