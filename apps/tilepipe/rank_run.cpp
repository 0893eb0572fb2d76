#include "apps/tilepipe/rank_run.hpp"

#include <unistd.h>

#include <cstdio>
#include <optional>

#include "framework/graph/rank_plan.hpp"
#include "framework/graph/rank_report.hpp"

#ifdef TILEPIPE_HAVE_RANKS
#include "framework/ranks/rank_link.hpp"
#include "framework/ranks/rank_world.hpp"
#endif

namespace tp::cli {

namespace {

#ifdef TILEPIPE_HAVE_RANKS
class MpiRankRun final : public RankRun {
public:
    MpiRankRun(RankLayout layout, int rank) : layout_(std::move(layout)), rank_(rank) {}

    int rank() const override { return rank_; }
    void start() override {
        world_.emplace();
        links_.emplace(world_->links());
    }
    RankLinkTasks* links() override { return &*links_; }
    bool agree_started(const std::string& error) override {
        const std::vector<std::string> errors = world_->agree_started(error);
        if (rank_ == 0)
            for (const std::string& e : errors) std::fprintf(stderr, "tilepipe: %s\n", e.c_str());
        return errors.empty();
    }
    void tick() override { world_->tick(); }
    void end_run() override { world_->end_run(); }
    void merge(RunReport& r) override {
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        const std::vector<std::string> all = world_->gather(rank_summary(r, rank_, host).dump());
        if (rank_ != 0) return;
        std::vector<nlohmann::json> summaries;
        for (const std::string& s : all) summaries.push_back(nlohmann::json::parse(s));
        merged_ = merge_ranks(r, summaries, layout_);
    }
    std::string table() const override { return format_ranks(merged_); }
    void add_json(nlohmann::json& j) const override { add_ranks_json(j, merged_); }
    int agree_exit(int status) override { return world_->agree(status); }

private:
    RankLayout layout_;
    int rank_;
    RanksReport merged_;
    // The links' tasks are gone (with the runner) before the world finalizes MPI.
    std::optional<RankWorld> world_;
    std::optional<MpiRankLinks> links_;
};
#endif

}  // namespace

int RankRun::launched_rank() { return mpirun_env().rank; }

std::unique_ptr<RankRun> RankRun::prepare(AppConfig& app, AppPlan& plan) {
    const RankLayout layout = plan_ranks(app, plan.graph);
    const MpirunEnv env = mpirun_env();
    check_world(app, layout, env.size, env.launched);
    check_rank_layout(app, plan.graph, layout);
    if (layout.ranks == 1) return nullptr;  // one process: as an app without ranks
#ifdef TILEPIPE_HAVE_RANKS
    RankPart part = plan_rank_part(app, plan, layout, env.rank);
    app = std::move(part.app);
    plan = std::move(part.plan);
    return std::make_unique<MpiRankRun>(layout, env.rank);
#else
    throw LocatedError(layout.highest_where, "rank " + std::to_string(layout.ranks - 1) +
                                                 ": this tilepipe was built without Open MPI, which runs ranks (meson -Dmpi=enabled)");
#endif
}

}  // namespace tp::cli
