// AppRunner: turns a validated AppConfig into a running app and reports what it did.
//
// Construction (EAL must be up) creates the packet pools (one per place of the sources:
// memory_plan.hpp), the stages (opening them: files are
// loaded here, before timing starts), the channels between consecutive nodes, and the
// threads the plan maps the nodes' tiles onto. run() starts the clock when every thread is ready,
// waits for end of stream to reach every sink, and builds the RunReport, including each
// pool's fill level: a correct run ends with every pool full.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/channel.hpp"
#include "framework/config/app_config.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_network.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/memory_plan.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/metrics/live_view.hpp"
#include "framework/metrics/progress_line.hpp"
#include "framework/metrics/run_report.hpp"
#include "framework/patterns/packet_map.hpp"
#include "framework/runtime/node_task.hpp"
#include "framework/runtime/scheduler.hpp"

namespace tp {

struct RunOptions {
    // Called with a progress line (format_progress) every `progress_every` once the run has
    // lasted `progress_after` (nullptr: silent).
    std::function<void(const std::string&)> progress;
    std::chrono::milliseconds progress_after{2000};
    std::chrono::milliseconds progress_every{1000};
    // Called once when a signal has stopped the sources and what is in flight drains, and once
    // more if a second one cuts the drain short (nullptr: silent).
    std::function<void(const std::string&)> notice;
    // Called on the run's thread every few tens of milliseconds while the tiles run (a rank
    // passes stop requests between processes here); nullptr: none.
    std::function<void()> tick;
};

// Messages a link between ranks keeps in flight: the receiver returns credits. A message holds
// what the sender found waiting, up to kRankLinkMessagePackets packets (a few bursts).
inline constexpr uint32_t kRankLinkCredits = 8;
inline constexpr uint32_t kRankLinkMessagePackets = 8 * kBurstMax;
// The pool of data-less mbufs such a link's receiving end attaches lent buffers to.
inline MbufPoolSpec rank_link_header_spec() {
    MbufPoolSpec spec;
    spec.mbufs = 2 * kRankLinkSlots - 1;
    spec.cache = 64;
    spec.data_room = 0;
    return spec;
}

// Makes the tasks of a plan's RankSend and RankReceive nodes (the links between ranks: an
// MPI build's framework/ranks/); an app without ranks has none.
class RankLinkTasks {
public:
    virtual ~RankLinkTasks() = default;
    // Takes what `in` carries and sends it to node.peer_rank; `pool` is the node's.
    virtual std::unique_ptr<Task> make_send(const GraphNode& node, Channel<PacketDesc>* in, MbufPool& pool) = 0;
    // Emits into `out` what node.peer_rank sends, each packet in an mbuf of `pool` (or one the
    // sending rank lends).
    virtual std::unique_ptr<Task> make_receive(const GraphNode& node, Channel<PacketDesc>* out, MbufPool& pool) = 0;
    // How the link of a RankSend or RankReceive node carries packets ("lent", "messages"): the
    // report's tile role says it after the direction.
    virtual std::string kind(const GraphNode& node) const = 0;
    // Where pool `index` (MemoryPlan::pools' order) of this rank puts its mbufs, before it is
    // made: links that lend packets need them in memory another rank maps. Default: unchanged.
    virtual void place_pool(size_t index, MbufPoolSpec& spec) {
        (void)index;
        (void)spec;
    }
};

// EAL settings the app needs: memory for its pools and stages.
EalOptions eal_options_for(const AppConfig& app, const AppPlan& plan);


class AppRunner {
public:
    explicit AppRunner(const AppConfig& app);
    // `rank_links`: makes the RankSend/RankReceive nodes' tasks (outlives the runner); needed
    // when the plan has such nodes.
    AppRunner(const AppConfig& app, AppPlan plan, RankLinkTasks* rank_links = nullptr);
    ~AppRunner();
    AppRunner(const AppRunner&) = delete;
    AppRunner& operator=(const AppRunner&) = delete;

    RunReport run(const RunOptions& opts = {});

    size_t threads() const { return scheduler_->threads(); }
    // The packet pools, in MemoryPlan::pools' order (the report's too); pool() is the first
    // source's, the only one when the sources are alike.
    const std::vector<std::unique_ptr<MbufPool>>& pools() const { return pools_; }
    const MbufPool& pool() const { return *pools_.front(); }
    // Where the `memory:` setting put the pools, channels and stage state, and each area bound.
    const MemoryPlan& memory_plan() const { return memory_; }
    const std::vector<BoundArea>& bound_memory() const { return bound_; }

    // What the run has done so far; callable from any thread while this runner exists, before,
    // during and after run() (app_runner_live.cpp; see live_view.hpp for what it reads how).
    LiveView live_view() const;
    // End-to-end latency so far, merged from every sink's histogram. Safe while the run
    // lasts (a slightly stale view: see LatencyHistogram); exact once run() returned.
    LatencyHistogram latency() const;

private:
    // One stage instance on one graph node (a farm's stages exist once per worker).
    struct Instance {
        const NodeConfig* config;
        size_t node;  // graph node
        std::unique_ptr<Stage> stage;
    };
    // The sources' first and last emit and the other stages' last burst (TSC, 0 = none).
    struct TrafficClock {
        uint64_t first_emit = 0, last_emit = 0, last_sink = 0, last_other = 0;
        uint64_t first_other = 0;  // the first burst of any stage but a source (a rank's part without sources)
    };
    TrafficClock traffic_clock() const;
    void collect_edges(RunReport& r) const;  // the app's edges, counted
    // The constructor's second half: opens the stages, makes the channels and tasks.
    void start_stages();
    // Opens one stage; an error becomes a LocatedError naming the stage and its node.
    // Builds the stage of `nc` on graph node `node` (a farm worker's: fw.0).
    std::unique_ptr<Stage> create_stage(const NodeConfig& nc, const std::string& node, const ParamValues& params);
    void open_stage(Instance& in, StageEnv& env);
    // Closes the first `opened_` stages, newest first, logging what their close() throws.
    void close_opened() noexcept;
    std::string stage_name(const Instance& in) const;
    // The name the report gives a stage instance: `parse`, `fw.0/acl`, `flows.1.sample`.
    std::string instance_name(const Instance& in) const;
    // The traced packets' paths, once the threads joined (--trace N).
    TraceReport trace_report() const;
    NodeTrace* trace_of(size_t node) const;  // nullptr without a trace
    ProgressSample progress_sample() const;
    EmitPlan emit_plan() const;
    // `live`: while tiles may run, so only what they publish with relaxed atomics, and the
    // windows end now (live_view()).
    RunReport collect(double wall_seconds, bool live = false) const;
    LatencyReport latency_report() const;

    // First member: setup_s counts from the start of construction (captures, tables, devices).
    std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
    AppConfig app_;
    AppPlan plan_;
    MemoryPlan memory_;
    std::vector<BoundArea> bound_;
    size_t unplaced_ = 0;  // areas and stages the kernel refused to place (warned once)
    void note_bound(std::vector<BoundArea> areas);
    // The files stages write, under temporary names until the constructor has started
    // everything; declared first among what stages use, so a failed start removes them last.
    std::unique_ptr<PendingOutputs> outputs_ = std::make_unique<PendingOutputs>();
    std::vector<std::unique_ptr<MbufPool>> pools_;
    struct Link {  // per graph edge: one of the two
        std::unique_ptr<Channel<PacketDesc>> desc;
        std::unique_ptr<Channel<uint64_t>> words;
    };
    std::unique_ptr<Task> make_task(size_t node, std::vector<Stage*> chain);
    RankLinkTasks* rank_links_ = nullptr;

    std::vector<Instance> instances_;
    size_t opened_ = 0;  // instances_[0, opened_) are open and not closed by the runner
    bool ran_ = false;   // run() started the tiles: they close the stages
    std::unique_ptr<AppNetworks> networks_;  // what the udn links run on; outlives them
    std::vector<Link> links_;
    std::vector<std::unique_ptr<MapTaskSlots>> map_slots_;  // per pattern (maps only)
    // Per graph node that numbers an ordered farm fed on demand (null elsewhere).
    std::vector<std::unique_ptr<SequenceCredit>> credits_;
    std::vector<std::unique_ptr<Task>> tasks_;              // per graph node
    std::unique_ptr<PacketTrace> trace_;                   // --trace N; null: none
    std::vector<std::unique_ptr<NodeTrace>> node_traces_;  // per graph node, with a trace
    std::unique_ptr<Scheduler> scheduler_;
    // The clock's start (steady_clock ticks), published with release for live_view(); -1 before.
    std::atomic<int64_t> started_at_{-1};
};

}  // namespace tp
