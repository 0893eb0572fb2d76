// The `memory:` setting: read from the file and from --set (app-wide, per farm, per node), and
// applied: after an app is set up, the kernel holds the asked policy for its packet pools'
// memory (one pool per place of the sources), its channels' buffers and its udn network's
// queues, and stages are built under it.
// This host may have a single NUMA node, so the checks read the policy the kernel records
// (get_mempolicy through hwloc) and where the pages are, not a speed.
#include <gtest/gtest.h>

#include <rte_mempool.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "framework/channel/detail/node_memory.hpp"
#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/graph/app_network.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/app_pools.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/graph/memory_plan.hpp"
#include "framework/runtime/memory_binding.hpp"
#include "framework/stage/registry.hpp"
#include "framework/stage/stage.hpp"

namespace tp {
namespace {

// A processor that notes the allocation policy it is built and opened under, and its socket.
struct ProbeSeen {
    MemoryPlace built, opened;
    int socket = -2;
};
std::vector<ProbeSeen> g_probes;

class MemoryProbe final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit MemoryProbe(const ParamValues&) : Stage(kKind), built_(thread_policy()) {}
    void open(StageEnv& env) override { g_probes.push_back({built_, thread_policy(), env.socket}); }
    void process(Burst&) override {}

private:
    MemoryPlace built_;
};
TILEPIPE_STAGE(MemoryProbe, "memory_probe", "test: notes the memory policy it is built and opened under");

std::string farm_app(const std::string& top, const std::string& farm_key = "", const std::string& parse_key = "") {
    // fuse: never keeps the farm's emitter and collector tiles on a host with few CPUs.
    std::string y = top +
                    "runtime: { fuse: never }\n"
                    "pipeline:\n"
                    "  - { stage: synth, name: src, count: 1000 }\n"
                    "  - { stage: parse, name: parse" + parse_key + " }\n"
                    "  - farm:\n"
                    "      name: fw\n"
                    "      workers: 2\n"
                    "      collect: unordered\n" + farm_key +
                    "      worker: [stage: pass]\n"
                    "  - drop\n";
    return y;
}

std::string placement_error(const std::string& yaml) {
    try {
        parse_app_config(yaml, "test.yaml");
    } catch (const LocatedError& e) {
        return e.what();
    }
    return "";
}

MemoryPolicy policy_of_node(const AppConfig& app, const std::string& name) {
    const AppPlan plan = plan_app(app);
    for (size_t i = 0; i < plan.graph.nodes.size(); ++i)
        if (plan.graph.nodes[i].name == name) return memory_policy_of(app, plan.graph, i);
    ADD_FAILURE() << "no graph node " << name;
    return MemoryPolicy::FirstTouch;
}

TEST(MemoryConfig, DefaultIsFirstTouchAndTheAppWideValueReachesEveryNode) {
    const AppConfig plain = parse_app_config(farm_app(""), "test.yaml");
    EXPECT_EQ(memory_policy_of(plain), MemoryPolicy::FirstTouch);
    EXPECT_FALSE(memory_policy_given(plain));
    const AppConfig app = parse_app_config(farm_app("memory: interleave\n"), "test.yaml");
    EXPECT_TRUE(memory_policy_given(app));
    for (const char* n : {"src", "parse", "fw.emitter", "fw.0", "fw.1", "fw.collector", "drop"})
        EXPECT_EQ(policy_of_node(app, n), MemoryPolicy::Interleave) << n;
}

TEST(MemoryConfig, AFarmCoversItsEmitterWorkersAndCollectorAndANodeOverridesBoth) {
    const AppConfig app = parse_app_config(
        farm_app("memory: interleave\n", "      memory: local\n", ", memory: first_touch"), "test.yaml");
    EXPECT_EQ(policy_of_node(app, "src"), MemoryPolicy::Interleave);
    EXPECT_EQ(policy_of_node(app, "parse"), MemoryPolicy::FirstTouch);
    for (const char* n : {"fw.emitter", "fw.0", "fw.1", "fw.collector"}) EXPECT_EQ(policy_of_node(app, n), MemoryPolicy::Local) << n;
    EXPECT_EQ(policy_of_node(app, "drop"), MemoryPolicy::Interleave);
}

TEST(MemoryConfig, ABadValueNamesItsPlaceAndTheValues) {
    EXPECT_NE(placement_error(farm_app("memory: fast\n")).find("test.yaml:1:9: unknown memory placement 'fast' (known: local, interleave, first_touch)"),
              std::string::npos)
        << placement_error(farm_app("memory: fast\n"));
    EXPECT_NE(placement_error(farm_app("", "", ", memory: near")).find("test.yaml:4:42: unknown memory placement 'near'"), std::string::npos)
        << placement_error(farm_app("", "", ", memory: near"));
    EXPECT_NE(placement_error(farm_app("", "      memory: [local]\n")).find("test.yaml:9:15: memory must be a single value"), std::string::npos)
        << placement_error(farm_app("", "      memory: [local]\n"));
}

TEST(MemoryConfig, SetReachesTheAppAFarmAndANode) {
    AppConfig app = parse_app_config(farm_app(""), "test.yaml");
    apply_overrides(app, AppOverrides{{}, {}, {}, {}, {"memory=local", "fw.memory=interleave", "drop.memory=first_touch"}});
    EXPECT_EQ(policy_of_node(app, "src"), MemoryPolicy::Local);
    EXPECT_EQ(policy_of_node(app, "fw.0"), MemoryPolicy::Interleave);
    EXPECT_EQ(policy_of_node(app, "fw.collector"), MemoryPolicy::Interleave);
    EXPECT_EQ(policy_of_node(app, "drop"), MemoryPolicy::FirstTouch);
    try {
        apply_set(app, "parse.memory=everywhere");
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_NE(std::string(e.what()).find("--set parse.memory=everywhere: unknown memory placement 'everywhere'"), std::string::npos)
            << e.what();
    }
}

// A worker chain runs as one node, placed by its first stage's memory: a later stage's own is
// refused rather than ignored; a worker pipeline's stages are nodes of their own.
TEST(MemoryConfig, OnlyTheFirstStageOfAWorkerChainTakesMemory) {
    const std::string chain = "pipeline:\n  - synth\n  - farm:\n      name: fw\n      worker:\n        - pass\n"
                              "        - { stage: pass, name: second, memory: local }\n  - drop\n";
    EXPECT_EQ(placement_error(chain), "test.yaml:7:48: 'second' is not the first stage of the worker chain of farm 'fw', which runs as "
                               "one node placed by its first stage's memory: give it on 'pass' or on the farm");
    AppConfig piped = parse_app_config(
        "pipeline:\n  - synth\n  - farm:\n      name: fw\n      worker:\n        pipeline:\n          - pass\n"
        "          - { stage: pass, name: second, memory: local }\n  - drop\n",
        "test.yaml");
    EXPECT_EQ(policy_of_node(piped, "fw.1.second"), MemoryPolicy::Local);
    apply_set(piped, "fw.0/second.memory=interleave");
    EXPECT_EQ(policy_of_node(piped, "fw.0.second"), MemoryPolicy::Interleave);
}

// `memory` on a node is always its placement; dedup's byte budget is `copy_bytes`.
TEST(MemoryConfig, MemoryOnANodeIsItsPlacementOnEveryStage) {
    const std::string y = "pipeline:\n  - synth\n  - { stage: dedup, copy_bytes: 4096, memory: local }\n  - drop\n";
    const AppConfig app = parse_app_config(y, "test.yaml");
    EXPECT_EQ(app.pipeline[1].params.get_uint("copy_bytes"), 4096u);
    EXPECT_EQ(app.pipeline[1].memory.policy, MemoryPolicy::Local);
    EXPECT_NE(placement_error("pipeline:\n  - synth\n  - { stage: dedup, memory: 4096 }\n  - drop\n")
                  .find("test.yaml:3:29: unknown memory placement '4096'"),
              std::string::npos);
}

// Every page of every chunk of the pool carries `want`: every whole page, for a chunk's first
// and last page may hold a neighbour too (chunks start on a cache line), such as another pool
// of the app bound elsewhere, and take the policy bound last.
void expect_pool_policy(const MbufPool& pool, const MemoryPlace& want) {
    struct Seen {
        std::vector<std::pair<const void*, size_t>> chunks;
    } seen;
    rte_mempool_mem_iter(
        pool.get(),
        [](rte_mempool*, void* o, rte_mempool_memhdr* h, unsigned) { static_cast<Seen*>(o)->chunks.emplace_back(h->addr, h->len); },
        &seen);
    ASSERT_FALSE(seen.chunks.empty());
    for (auto [addr, len] : seen.chunks) {
        const uintptr_t start = (reinterpret_cast<uintptr_t>(addr) + page_size() - 1) & ~(uintptr_t(page_size()) - 1);
        const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + len) & ~(uintptr_t(page_size()) - 1);
        ASSERT_GT(end, start);
        addr = reinterpret_cast<const void*>(start), len = end - start;
        EXPECT_EQ(area_policy(addr, len), want) << describe(area_policy(addr, len)) << " for " << describe(want);
        for (int node : area_nodes(addr, len))  // where the pages landed (they were written at setup)
            EXPECT_TRUE(want.nodes.empty() || std::count(want.nodes.begin(), want.nodes.end(), node) == 1) << node;
    }
}

// The channel into `to`, as the runner bound it, carries `want` now.
void expect_channel_policy(const AppRunner& r, const std::string& what, const MemoryPlace& want) {
    size_t found = 0;
    for (const BoundArea& a : r.bound_memory())
        if (a.what == what) {
            ++found;
            EXPECT_EQ(a.error, "");
            EXPECT_EQ(area_policy(a.addr, a.bytes), want) << what << ": " << describe(area_policy(a.addr, a.bytes));
            EXPECT_FALSE(area_nodes(a.addr, a.bytes).empty()) << "zeroed, so placed";
        }
    EXPECT_GT(found, 0u) << "no area bound for " << what;
}

int numa_of(const AppRunner& r, const std::string& node) {
    const AppPlan plan = plan_app(parse_app_config(farm_app(""), "test.yaml"));
    for (size_t i = 0; i < plan.graph.nodes.size(); ++i)
        if (plan.graph.nodes[i].name == node) return r.memory_plan().numa_of_node[i];
    return -1;
}

TEST(MemoryBinding, InterleaveSpreadsThePoolAndTheChannelsOverTheAppsNodes) {
    const AppConfig app = parse_app_config(farm_app("memory: interleave\n"), "test.yaml");
    AppRunner r(app);
    const std::vector<int> nodes = r.memory_plan().app_nodes;
    ASSERT_FALSE(nodes.empty());
    expect_pool_policy(r.pool(), {MemoryPolicy::Interleave, nodes});
    EXPECT_EQ(r.pool().get()->socket_id, SOCKET_ID_ANY) << "spread by binding, not by DPDK's socket";
    expect_channel_policy(r, "channel src -> parse", {MemoryPolicy::Interleave, nodes});
    expect_channel_policy(r, "channel fw.0 -> fw.collector", {MemoryPolicy::Interleave, nodes});
    const RunReport rep = r.run();
    EXPECT_EQ(rep.delivered, 1000u);
    EXPECT_TRUE(rep.pools_full());
}

TEST(MemoryBinding, LocalBindsEachChannelToItsReceiversNodeAndThePoolToTheSources) {
    const AppConfig app = parse_app_config(farm_app("memory: local\n"), "test.yaml");
    AppRunner r(app);
    expect_pool_policy(r.pool(), {MemoryPolicy::Local, {numa_of(r, "src")}});
    // With hugepages a pool is never bound afterwards: it asks DPDK for its source's socket.
    EXPECT_EQ(r.pool().get()->socket_id, numa_of(r, "src"));
    expect_channel_policy(r, "channel src -> parse", {MemoryPolicy::Local, {numa_of(r, "parse")}});
    expect_channel_policy(r, "channel fw.emitter -> fw.1", {MemoryPolicy::Local, {numa_of(r, "fw.1")}});
    EXPECT_EQ(r.run().delivered, 1000u);
}

// The default binds nothing: no system call, today's placement (pages where first written).
TEST(MemoryBinding, FirstTouchEverywhereBindsNothing) {
    const AppConfig app = parse_app_config(farm_app("memory: first_touch\n"), "test.yaml");
    AppRunner r(app);
    EXPECT_FALSE(r.memory_plan().bind);
    EXPECT_TRUE(r.bound_memory().empty());
}

// A node's own setting: its input channel follows it; the others follow the app's explicitly
// (so a neighbour's binding never spills onto them).
TEST(MemoryBinding, ANodesSettingPlacesItsInputChannels) {
    const AppConfig app = parse_app_config(farm_app("", "", ", memory: interleave"), "test.yaml");
    AppRunner r(app);
    expect_channel_policy(r, "channel src -> parse", {MemoryPolicy::Interleave, r.memory_plan().app_nodes});
    expect_channel_policy(r, "channel parse -> fw.emitter", {MemoryPolicy::FirstTouch, {}});
    expect_pool_policy(r.pool(), {MemoryPolicy::FirstTouch, {}});
}

TEST(MemoryBinding, StagesAreBuiltAndOpenedUnderTheirNodesPolicy) {
    g_probes.clear();
    const MemoryPlace before = thread_policy();
    const AppConfig app = parse_app_config(
        "memory: interleave\npipeline:\n  - { stage: synth, count: 10 }\n  - { stage: memory_probe, name: near, memory: local }\n"
        "  - { stage: memory_probe, name: spread }\n  - drop\n",
        "test.yaml");
    {
        AppRunner r(app);
        ASSERT_EQ(g_probes.size(), 2u);
        const int near = r.memory_plan().numa_of_node[1];
        EXPECT_EQ(g_probes[0].built, (MemoryPlace{MemoryPolicy::Local, {near}}));
        EXPECT_EQ(g_probes[0].opened, (MemoryPlace{MemoryPolicy::Local, {near}}));
        EXPECT_EQ(g_probes[0].socket, near) << "DPDK tables follow StageEnv::socket";
        EXPECT_EQ(g_probes[1].built, (MemoryPlace{MemoryPolicy::Interleave, r.memory_plan().app_nodes}));
        EXPECT_EQ(g_probes[1].opened, (MemoryPlace{MemoryPolicy::Interleave, r.memory_plan().app_nodes}));
        EXPECT_EQ(g_probes[1].socket, -1);
        EXPECT_EQ(thread_policy(), before) << "the building thread gets its own policy back";
        EXPECT_EQ(r.run().delivered, 10u);
    }
}

// A processor that notes the pool its node was given and counts the packets it sees from
// another pool. Read after run() returned (the join orders the tiles' writes before).
struct PoolSeen {
    const MbufPool* pool = nullptr;
    uint64_t packets = 0, foreign = 0;
};
std::deque<PoolSeen> g_pool_seen;

class PoolProbe final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit PoolProbe(const ParamValues&) : Stage(kKind) {}
    void open(StageEnv& env) override { seen_ = &g_pool_seen.emplace_back(PoolSeen{env.pool}); }
    void process(Burst& b) override {
        seen_->packets += b.n;
        for (const PacketDesc& d : b)
            if (d.mbuf->pool != seen_->pool->get()) ++seen_->foreign;
    }

private:
    PoolSeen* seen_ = nullptr;
};
TILEPIPE_STAGE(PoolProbe, "pool_probe", "test: notes its node's pool and counts packets from other pools");

// An RSS style farm: each worker's source reads its own queue of one net_null port; worker 1
// may get a placement of its own.
std::string two_source_app(const std::string& device, const std::string& memory) {
    return memory + "pipeline:\n  - farm:\n      name: rx\n      workers: 2\n      emitter: false\n"
                    "      worker:\n        - { stage: port, device: " + device + ", packets: 1000 }\n"
                    "        - pool_probe\n  - drop\n";
}

size_t node_named(const AppConfig& app, const std::string& name) {
    const AppPlan plan = plan_app(app);
    for (size_t i = 0; i < plan.graph.nodes.size(); ++i)
        if (plan.graph.nodes[i].name == name) return i;
    ADD_FAILURE() << "no graph node " << name;
    return 0;
}

TEST(MemoryPools, SourcesWithTwoPlacementsFillTwoPoolsEachBoundToItsSourcesPlace) {
    g_pool_seen.clear();
    AppConfig app = parse_app_config(two_source_app("net_null_pools2", "memory: local\n"), "test.yaml");
    apply_overrides(app, AppOverrides{{}, {}, {}, {}, {"rx.1/port.memory=interleave"}});
    AppRunner r(app);
    const MemoryPlan& m = r.memory_plan();
    ASSERT_EQ(r.pools().size(), 2u);
    ASSERT_EQ(m.pools.size(), 2u);
    const size_t w0 = node_named(app, "rx.0"), w1 = node_named(app, "rx.1");
    EXPECT_EQ(m.pool_of_node[w0], 0u);
    EXPECT_EQ(m.pool_of_node[w1], 1u);
    EXPECT_EQ(m.pool_follows, (std::vector<int>{static_cast<int>(w0), static_cast<int>(w1)}));
    expect_pool_policy(*r.pools()[0], {MemoryPolicy::Local, {m.numa_of_node[w0]}});
    expect_pool_policy(*r.pools()[1], {MemoryPolicy::Interleave, m.app_nodes});
    // Each pool alone holds what the single pool would: sized alike.
    EXPECT_EQ(r.pools()[0]->capacity(), r.pools()[1]->capacity());
    EXPECT_NE(r.pools()[0]->name(), r.pools()[1]->name());

    const RunReport rep = r.run();
    EXPECT_EQ(rep.packets, 2000u);
    EXPECT_EQ(rep.delivered, 2000u);
    EXPECT_EQ(rep.unaccounted, 0);
    ASSERT_EQ(rep.pools.size(), 2u);
    for (const PoolReport& p : rep.pools) EXPECT_EQ(p.available, p.capacity) << p.name;
    EXPECT_TRUE(rep.pools_full());
    // Each worker's source received into its own pool (the port's queue 1 moved to pool 1).
    ASSERT_EQ(g_pool_seen.size(), 2u);
    std::vector<const MbufPool*> given;
    for (const PoolSeen& s : g_pool_seen) {
        given.push_back(s.pool);
        EXPECT_EQ(s.packets, 1000u);
        EXPECT_EQ(s.foreign, 0u) << "packets from another pool " << s.pool->name() << " " << s.packets;
    }
    std::sort(given.begin(), given.end());
    std::vector<const MbufPool*> pools{r.pools()[0].get(), r.pools()[1].get()};
    std::sort(pools.begin(), pools.end());
    EXPECT_EQ(given, pools);
}

TEST(MemoryPools, SourcesSharingASettingShareOnePool) {
    for (const char* memory : {"", "memory: interleave\n"}) {
        g_pool_seen.clear();
        const AppConfig app = parse_app_config(two_source_app("net_null_pools1", memory), "test.yaml");
        AppRunner r(app);
        ASSERT_EQ(r.pools().size(), 1u) << memory;
        EXPECT_EQ(r.memory_plan().pools.size(), 1u);
        EXPECT_EQ(r.memory_plan().sources.size(), 2u);
        EXPECT_EQ(r.pools()[0]->name().rfind("tp_pkts_", 0), 0u);
        const RunReport rep = r.run();
        EXPECT_EQ(rep.delivered, 2000u);
        ASSERT_EQ(rep.pools.size(), 1u);
        EXPECT_TRUE(rep.pools_full());
        for (const PoolSeen& s : g_pool_seen) EXPECT_EQ(s.pool, r.pools()[0].get());
    }
}

// EAL is asked for memory for every pool, and advice on too little sizes each pool to fit.
TEST(MemoryPools, EalMemoryCoversEveryPoolAndTheAdviceSizesEachToFit) {
    AppConfig app = parse_app_config(two_source_app("net_null_pools3", ""), "test.yaml");
    const AppPlan one = plan_app(app);
    const uint64_t pool = MbufPool::footprint(app_pool_spec(app, pool_mbufs(app, one)));
    const uint64_t alone = eal_options_for(app, one).memory_bytes;
    apply_overrides(app, AppOverrides{{}, {}, {}, {}, {"rx.1/port.memory=interleave"}});
    const AppPlan two = plan_app(app);
    const EalOptions eal = eal_options_for(app, two);
    EXPECT_EQ(eal.memory_bytes, alone + pool) << "a second pool, sized as the first";
    std::string msg;
    try {
        check_pool_memory(app, two, eal, (eal_memory_mb(eal) << 20) - 1);
    } catch (const std::runtime_error& e) {
        msg = e.what();
    }
    EXPECT_NE(msg.find("each of its 2 pools of " + std::to_string(pool_mbufs(app, two)) + " mbufs"), std::string::npos) << msg;
    const size_t at = msg.find("set pool.mbufs to ");
    ASSERT_NE(at, std::string::npos) << msg;
    const uint32_t fits = static_cast<uint32_t>(std::stoul(msg.substr(at + 18)));
    EalOptions smaller = eal;
    smaller.memory_bytes = eal.memory_bytes - 2 * pool + 2 * MbufPool::footprint(app_pool_spec(app, fits));
    EXPECT_LE(eal_memory_mb(smaller) << 20, (eal_memory_mb(eal) << 20) - 1) << "both pools of " << fits << " fit";
}

TEST(MemoryPools, AWorkersOwnSettingNamesAWorkerItsFarmHas) {
    AppConfig app = parse_app_config(two_source_app("net_null_pools0", ""), "test.yaml");
    try {
        apply_overrides(app, AppOverrides{{}, {}, {}, {}, {"rx.2/port.memory=local"}});
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_NE(std::string(e.what()).find("--set rx.2/port.memory=local: farm 'rx' has 2 worker(s)"), std::string::npos) << e.what();
    }
}

// `udn` links ride the app's one messaging network: each tile's queues are popped by the node
// the tile hosts, so they follow that node's setting as its channel buffers would.
std::string udn_app(const std::string& parse_memory) {
    return "transport: udn\nruntime: { fuse: never }\npipeline:\n"
           "  - { stage: synth, name: src, count: 1000 }\n"
           "  - { stage: parse, name: parse, memory: " + parse_memory + " }\n"
           "  - drop\n";
}

// Every queue of the network tile hosting `node` was bound and carries `want` now.
void expect_network_queues(const AppRunner& r, const std::string& node, const MemoryPlace& want) {
    size_t found = 0;
    for (const BoundArea& a : r.bound_memory())
        if (a.what.rfind("network ", 0) == 0 && a.what.find(" (node " + node + ")") != std::string::npos) {
            ++found;
            EXPECT_EQ(a.error, "") << a.what;
            EXPECT_EQ(reinterpret_cast<uintptr_t>(a.addr) % page_size(), 0u) << a.what << ": pages of its own";
            EXPECT_EQ(area_policy(a.addr, a.bytes), want) << a.what << ": " << describe(area_policy(a.addr, a.bytes));
        }
    EXPECT_EQ(found, 5u) << node << ": 4 demux queues and the catch-all";  // the default network.queues
}

TEST(MemoryBinding, AnUdnReceiversNetworkQueuesFollowItsSetting) {
    const AppConfig app = parse_app_config(udn_app("interleave"), "test.yaml");
    AppRunner r(app);
    expect_network_queues(r, "parse", {MemoryPolicy::Interleave, r.memory_plan().app_nodes});
    // The sender's tile (it pops credits) and the sink's follow their own first_touch.
    expect_network_queues(r, "src", {MemoryPolicy::FirstTouch, {}});
    expect_network_queues(r, "drop", {MemoryPolicy::FirstTouch, {}});
    const RunReport rep = r.run();
    EXPECT_EQ(rep.delivered, 1000u);
    EXPECT_TRUE(rep.pools_full());
}

TEST(MemoryBinding, LocalBindsAnUdnReceiversNetworkQueuesToItsNode) {
    const AppConfig app = parse_app_config(udn_app("local"), "test.yaml");
    AppRunner r(app);
    const AppPlan plan = plan_app(app);
    ASSERT_EQ(plan.graph.nodes[1].name, "parse");
    expect_network_queues(r, "parse", {MemoryPolicy::Local, {r.memory_plan().numa_of_node[1]}});
    expect_network_queues(r, "drop", {MemoryPolicy::FirstTouch, {}});
    EXPECT_EQ(r.run().delivered, 1000u);
}

// The warnings logged while it lives.
class WarningLog {
public:
    WarningLog() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64)) {
        sink_->set_level(spdlog::level::warn);
        spdlog::default_logger()->sinks().push_back(sink_);
    }
    ~WarningLog() {
        auto& sinks = spdlog::default_logger()->sinks();
        sinks.erase(std::find(sinks.begin(), sinks.end(), sink_));
    }
    size_t count(const std::string& part) const {
        const auto lines = sink_->last_formatted();
        return size_t(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; }));
    }

private:
    std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

// An event device's queues are DPDK's own memory: nothing is bound, and the node that asked
// for a placement is told so where the bound areas are listed, and by one warning of the
// network's own (not the runner's single warning for the first area, which an earlier
// refusal would take).
TEST(MemoryBinding, AnEventdevNetworksQueuesAreReportedUnbound) {
    std::string y = udn_app("interleave");
    y.replace(y.find("transport: udn"), 14, "transport: udn_eventdev");
    const AppConfig app = parse_app_config(y, "test.yaml");
    {
        const AppPlan plan = plan_app(app);
        const MemoryPlan memory = plan_memory(app, plan);
        const WarningLog log;
        const AppNetworks networks(plan, &memory.node);
        EXPECT_EQ(log.count("every network queue of tile 1 (node parse) is not placed"), 1u);
        ASSERT_EQ(networks.bound_memory().size(), 1u);
        EXPECT_TRUE(networks.bound_memory()[0].warned);
    }
    const WarningLog log;
    AppRunner r(app);
    std::vector<std::string> network;
    for (const BoundArea& a : r.bound_memory())
        if (a.what.find("network") != std::string::npos) {
            network.push_back(a.what);
            EXPECT_EQ(a.addr, nullptr);
            EXPECT_NE(a.error.find("event device's own DPDK memory"), std::string::npos) << a.error;
        }
    EXPECT_EQ(network, std::vector<std::string>{"every network queue of tile 1 (node parse)"});
    EXPECT_EQ(log.count("event device's own DPDK memory"), 1u) << "warned once";
    EXPECT_EQ(r.run().delivered, 1000u);
}

TEST(MemoryBinding, NodeMemoryIsPageAlignedAndBoundInsideAPlacement) {
    const MemoryPlace want{MemoryPolicy::Interleave, host_numa_nodes()};
    detail::NodeMemoryPlacement placement(want);
    detail::NodeMemory a(100, -1), b(100, -1);
    ASSERT_EQ(placement.areas().size(), 2u);
    for (const detail::NodeMemory* m : {&a, &b}) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(m->get()) % page_size(), 0u);
        EXPECT_EQ(m->bytes() % page_size(), 0u);
        EXPECT_EQ(area_policy(m->get(), m->bytes()), want);
    }
}

// Stage state: create() and open() run under the node's policy as the thread's own.
TEST(MemoryBinding, AThreadScopeSetsAndRestoresTheThreadsPolicy) {
    const MemoryPlace before = thread_policy();
    {
        ThreadMemoryScope scope({MemoryPolicy::Local, {host_numa_nodes().front()}});
        EXPECT_EQ(scope.error(), "");
        EXPECT_EQ(thread_policy(), (MemoryPlace{MemoryPolicy::Local, {host_numa_nodes().front()}}));
    }
    EXPECT_EQ(thread_policy(), before);
}

}  // namespace
}  // namespace tp
