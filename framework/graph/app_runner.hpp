// AppRunner: turns a validated AppConfig into a running app and reports what it did.
//
// Construction (EAL must be up) creates the packet pool, the stages (opening them: files are
// loaded here, before timing starts), the channels between consecutive nodes, and the
// threads the plan maps the nodes' tiles onto. run() starts the clock when every thread is ready,
// waits for end of stream to reach every sink, and builds the RunReport, including each
// pool's fill level: a correct run ends with every pool full.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/channel.hpp"
#include "framework/config/app_config.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/metrics/run_report.hpp"
#include "framework/runtime/node_task.hpp"
#include "framework/runtime/scheduler.hpp"

namespace tp {

struct RunOptions {
    // Called about once a second while a run lasts longer than 2 s (nullptr: silent).
    std::function<void(const std::string&)> progress;
};

// EAL settings the app needs: memory for its pools, PCI only if a stage asks for it.
EalOptions eal_options_for(const AppConfig& app);

// Pool size the app gets when `pool.mbufs` is not given.
uint32_t default_pool_mbufs(const AppConfig& app, size_t threads);

class AppRunner {
public:
    explicit AppRunner(const AppConfig& app);
    AppRunner(const AppConfig& app, AppPlan plan);
    ~AppRunner();
    AppRunner(const AppRunner&) = delete;
    AppRunner& operator=(const AppRunner&) = delete;

    RunReport run(const RunOptions& opts = {});

    size_t threads() const { return scheduler_->threads(); }

private:
    struct Node {
        const NodeConfig* config;
        std::unique_ptr<Stage> stage;
        std::unique_ptr<NodeTask> task;
        size_t thread = 0;
    };
    RunReport collect(double seconds) const;
    std::string progress_line(double seconds) const;

    AppConfig app_;
    AppPlan plan_;
    std::unique_ptr<MbufPool> pool_;
    std::vector<Node> nodes_;
    std::vector<std::unique_ptr<Channel<PacketDesc>>> links_;
    std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace tp
