// RankLayout: which rank (a process `mpirun -np R` started) runs each node of an app's graph,
// and the links between ranks.
//
// A node, a farm or a map sits on `rank: N` (default 0); a farm's `ranks: [1, 2]` spreads its
// workers round-robin over those ranks (its emitter and collector stay on the farm's rank). A
// worker's chain and a map share packets in memory, so each stays on one rank. Every rank
// builds the same layout from the same config and runs its part (plan_rank_part): its own
// nodes, plus for each edge to another rank a RankSend node (this end sends) or a RankReceive
// node (this end receives into its own pool). The link's index in `links` tags its messages.
#pragma once

#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/graph/app_plan.hpp"

namespace tp {

struct RankLink {
    size_t edge = 0;  // index into the whole graph's edges
    int from_rank = 0, to_rank = 0;
    std::string from, to;  // the nodes it joins
};

struct RankLayout {
    int ranks = 1;                  // the highest rank named + 1
    bool named = false;             // the config gives something a rank
    Location highest_where;         // where the highest rank is named
    std::vector<int> rank_of_node;  // per graph node
    std::vector<RankLink> links;    // the edges between ranks, in edge order
};

// Throws LocatedError at the setting when a worker stage is given its own rank.
RankLayout plan_ranks(const AppConfig& app, const AppGraph& graph);
// Throws LocatedError at the highest rank named when a rank between 0 and it holds no node, at
// a rank's first node when the rank has no link to the others.
void check_rank_layout(const AppConfig& app, const AppGraph& graph, const RankLayout& layout);

// What mpirun tells the processes it starts (Open MPI's OMPI_COMM_WORLD_* variables, or a
// PMIx launcher's PMIX_RANK), read before MPI starts: a process started otherwise is one rank.
struct MpirunEnv {
    bool launched = false;
    int size = 1, rank = 0;
};
MpirunEnv mpirun_env();

// The processes the app runs as: `world` (1 without mpirun). Refuses (LocatedError at the
// highest rank named, or the config's first line) a rank without mpirun, mpirun around an app
// naming no rank, and a world that is not the highest rank + 1.
void check_world(const AppConfig& app, const RankLayout& layout, int world, bool under_mpirun);

// The app as rank `rank` runs it: the config (a chaos stall on another rank's node cleared)
// and its part of the plan `full` (its nodes and the link ends, placed on its host).
// The name of link `index`'s ends in the report's tiles: `mpi3:fw.emitter->fw.1`.
std::string rank_link_name(int index, const std::string& from, const std::string& to);

struct RankPart {
    AppConfig app;
    AppPlan plan;
};
RankPart plan_rank_part(const AppConfig& app, const AppPlan& full, const RankLayout& layout, int rank);

}  // namespace tp
