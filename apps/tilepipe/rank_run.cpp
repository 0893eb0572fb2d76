#include "apps/tilepipe/rank_run.hpp"

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <vector>

#include "framework/graph/rank_plan.hpp"
#include "framework/graph/rank_report.hpp"

#ifdef TILEPIPE_HAVE_RANKS
#include "framework/graph/app_pools.hpp"
#include "framework/ranks/rank_link.hpp"
#include "framework/ranks/rank_memory.hpp"
#include "framework/ranks/rank_world.hpp"
#endif

namespace tp::cli {

namespace {

#ifdef TILEPIPE_HAVE_RANKS
class MpiRankRun final : public RankRun {
public:
    MpiRankRun() : links_(world_.links()) {}

    int rank() const override { return world_.rank(); }
    void prepare(AppConfig& app, AppPlan& plan) override {
        layout_ = plan_ranks(app, plan.graph);
        check_world(app, layout_, world_.size(), true);
        check_rank_layout(app, plan.graph, layout_);
        std::vector<bool> runs(app.pipeline.size(), false);
        for (size_t n = 0; n < plan.graph.nodes.size(); ++n)
            if (layout_.rank_of_node[n] == world_.rank())
                for (size_t i : plan.graph.nodes[n].stages) runs[i] = true;
        check_stage_params(app, runs);
        RankPart part = plan_rank_part(app, plan, layout_, world_.rank());
        app = std::move(part.app);
        plan = std::move(part.plan);
    }
    bool agree_config(const std::string& error) override {
        const std::vector<std::string> all = world_.gather(error);  // empty but on rank 0
        bool alike = true, any = false;
        for (const std::string& e : all) alike = alike && e == all.front(), any = any || !e.empty();
        if (any && alike) std::fprintf(stderr, "tilepipe: %s\n", all.front().c_str());
        for (size_t r = 0; any && !alike && r < all.size(); ++r)
            if (!all[r].empty()) std::fprintf(stderr, "tilepipe: rank %zu: %s\n", r, all[r].c_str());
        return world_.agree(any ? 1 : 0) == 0;
    }
    void share(const AppConfig& app, const AppPlan& plan) override {
        if (app.rank_links == "messages") return;  // every rank reads the same config: none sets it up
        std::vector<RankMemory::SendLink> sends;
        for (const GraphNode& g : plan.graph.nodes)
            if (g.role == NodeRole::RankSend) sends.push_back(RankMemory::SendLink{g.rank_link, g.peer_rank});
        memory_.emplace(world_.links(), sends, app_pool_specs(app, plan), eal_options_for(app, plan).pci_devices.empty());
        links_.share(&*memory_);
    }
    RankLinkTasks* links() override { return &links_; }
    bool agree_started(const std::string& error) override {
        const std::vector<std::string> errors = world_.agree_started(error);
        if (world_.rank() == 0)
            for (const std::string& e : errors) std::fprintf(stderr, "tilepipe: %s\n", e.c_str());
        return errors.empty();
    }
    void tick() override { world_.tick(); }
    void end_run() override { world_.end_run(); }
    void merge(RunReport& r) override {
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        const std::vector<std::string> all = world_.gather(rank_summary(r, world_.rank(), host).dump());
        if (world_.rank() != 0) return;
        std::vector<nlohmann::json> summaries;
        for (const std::string& s : all) summaries.push_back(nlohmann::json::parse(s));
        merged_ = merge_ranks(r, summaries, layout_);
    }
    std::string table() const override { return format_ranks(merged_); }
    void add_json(nlohmann::json& j) const override { add_ranks_json(j, merged_); }
    int agree_exit(int status) override { return world_.agree(status); }

private:
    // First: MPI_Finalize (its destructor) comes after the links' tasks and the runner are gone,
    // and the shared memory (the pools' mbufs) after the runner.
    RankWorld world_;
    std::optional<RankMemory> memory_;
    MpiRankLinks links_;
    RankLayout layout_;
    RanksReport merged_;
};
#endif

}  // namespace

std::unique_ptr<RankRun> RankRun::launch() {
#ifdef TILEPIPE_HAVE_RANKS
    const MpirunEnv env = mpirun_env();
    if (env.launched && env.size > 1) return std::make_unique<MpiRankRun>();
#endif
    return nullptr;
}

void RankRun::check_alone(const AppConfig& app, const AppPlan& plan) {
    const RankLayout layout = plan_ranks(app, plan.graph);
    const MpirunEnv env = mpirun_env();
#ifndef TILEPIPE_HAVE_RANKS
    if (layout.ranks > 1 || env.size > 1)
        throw LocatedError(layout.ranks > 1 ? layout.highest_where : Location{app.file, 1, 1},
                           "ranks need Open MPI, and this tilepipe was built without it (meson -Dmpi=enabled)");
#endif
    check_world(app, layout, env.size, env.launched);
    check_rank_layout(app, plan.graph, layout);
}

}  // namespace tp::cli
