// `mpirun -np R tilepipe run APP`: the app as one rank of R (framework/graph/rank_plan.hpp).
//
// Every rank loads the same config and builds the same plan (so every rank finds the same
// config error, or a rank whose host lacks a file its own; rank 0 prints them), then runs its own part: its nodes and the ends of its links
// to the other ranks, on Open MPI (framework/ranks/). Rank 0 prints one report merged from
// every rank's (framework/graph/rank_report.hpp); every rank exits with its status.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/metrics/run_report.hpp"

namespace tp::cli {

class RankRun {
public:
    // Under `mpirun -np R` (R > 1): this process as one rank, MPI started (std::runtime_error
    // when it cannot give what the links need). nullptr: one process, as without mpirun.
    static std::unique_ptr<RankRun> launch();
    // One process: refuses (LocatedError at the setting) an app that needs ranks.
    static void check_alone(const AppConfig& app, const AppPlan& plan);
    virtual ~RankRun() = default;

    virtual int rank() const = 0;
    // Lays the app out on ranks and checks the layout against the ranks mpirun started
    // (LocatedError at the setting); `app` and `plan` become this rank's part.
    virtual void prepare(AppConfig& app, AppPlan& plan) = 0;
    // After every rank loaded and planned the app (`error`: the config error it found, "" when
    // none): false when any rank found one, rank 0 having printed it (once when every rank
    // found the same, else each with its rank).
    virtual bool agree_config(const std::string& error) = 0;
    // After agree_config succeeded, on every rank (collective): sets up the memory the ranks of
    // each host share, so their links lend packets (runtime.rank_links).
    virtual void share(const AppConfig& app, const AppPlan& plan) = 0;
    virtual RankLinkTasks* links() = 0;
    // After this rank built its part (`error`: why it could not, "" when it did): false when
    // any rank could not, rank 0 having printed each one's error.
    virtual bool agree_started(const std::string& error) = 0;
    // While the tiles run (RunOptions::tick), then once after they joined.
    virtual void tick() = 0;
    virtual void end_run() = 0;
    // Rank 0: `r` becomes the merged report of every rank. The others: `r` is sent to rank 0.
    virtual void merge(RunReport& r) = 0;
    // Rank 0's ranks section of the table and of the JSON (after merge()).
    virtual std::string table() const = 0;
    virtual void add_json(nlohmann::json& j) const = 0;
    // Rank 0's exit status, on every rank.
    virtual int agree_exit(int status) = 0;
};

}  // namespace tp::cli
