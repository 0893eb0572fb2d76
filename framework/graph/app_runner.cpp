#include "framework/graph/app_runner.hpp"

#include <rte_cycles.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/cpu_affinity.hpp"

namespace tp {

namespace {
std::atomic<int> g_pool_serial{0};

uint32_t round_to_pool_size(uint64_t n) {
    // 2^k - 1 fits DPDK's ring exactly.
    uint64_t p = 4096;
    while (p - 1 < n) p <<= 1;
    return static_cast<uint32_t>(p - 1);
}

uint32_t link_capacity(const AppConfig& app, const NodeConfig& n) {
    return n.queue != 0 ? n.queue : app.queue;
}
}  // namespace

uint32_t default_pool_mbufs(const AppConfig& app, size_t threads) {
    uint64_t need = 1024;  // slack for mbufs a stage holds across bursts (reorder, batching)
    for (size_t i = 1; i < app.pipeline.size(); ++i) need += link_capacity(app, app.pipeline[i]);
    need += app.pipeline.size() * 2 * kBurstMax;               // one burst in hand per node
    need += (threads + 1) * uint64_t(app.pool.cache) * 3 / 2;  // per-lcore caches fill to 1.5x
    return round_to_pool_size(need);
}

EalOptions eal_options_for(const AppConfig& app) {
    EalOptions o;
    MbufPoolSpec spec;
    spec.mbufs = app.pool.mbufs != 0 ? app.pool.mbufs
                                     : default_pool_mbufs(app, std::max<size_t>(app.pipeline.size(), 1));
    spec.cache = app.pool.cache;
    spec.data_room = static_cast<uint16_t>(app.pool.data_room);
    o.memory_bytes = MbufPool::footprint(spec);
    for (const auto& n : app.pipeline)
        if (n.stage->memory_hint) o.memory_bytes += n.stage->memory_hint(n.params);
    return o;
}

AppRunner::AppRunner(const AppConfig& app) : AppRunner(app, plan_app(app)) {}

AppRunner::AppRunner(const AppConfig& app, AppPlan plan) : app_(app), plan_(std::move(plan)) {
    const std::vector<int>& thread_cpus = plan_.threads.cpu_of_thread;
    IdleBackoff backoff;
    if (plan_.oversubscribed()) backoff.spin_rounds = 0;  // CPUs are shared: never spin
    scheduler_ = std::make_unique<Scheduler>(thread_cpus, backoff);
    for (size_t i = 0; i < app_.pipeline.size(); ++i)
        nodes_.push_back(Node{&app_.pipeline[i], nullptr, nullptr, plan_.threads.thread_of_node[i]});

    MbufPoolSpec spec;
    spec.name = "tp_pkts_" + std::to_string(g_pool_serial.fetch_add(1));
    spec.mbufs = app_.pool.mbufs != 0 ? app_.pool.mbufs : default_pool_mbufs(app_, thread_cpus.size());
    spec.cache = app_.pool.cache;
    spec.data_room = static_cast<uint16_t>(app_.pool.data_room);
    pool_ = std::make_unique<MbufPool>(spec);

    uint8_t source_port = 0;
    for (auto& n : nodes_) {
        const NodeConfig& nc = *n.config;
        n.stage = nc.stage->create(nc.params);
        StageEnv env;
        env.pool = pool_.get();
        env.node_name = nc.name;
        env.socket = -1;
        if (n.stage->kind() == StageKind::Source) env.port = source_port++;
        n.stage->open(env);
    }

    // Link i feeds node i (i >= 1) from node i - 1.
    links_.resize(nodes_.size());
    for (const PlannedLink& l : plan_.links) {
        const size_t i = l.to;
        const NodeConfig& nc = *nodes_[i].config;
        ChannelSpec cs;
        cs.transport = l.transport;
        cs.capacity = l.capacity;
        try {
            links_[i] = make_desc_channel(cs);
        } catch (const std::invalid_argument& e) {
            throw LocatedError(nc.where, e.what());
        }
        const size_t from = nodes_[i - 1].thread, to = nodes_[i].thread;
        if (from != to) links_[i]->set_bells(scheduler_->bell(from), scheduler_->bell(to));
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
        Channel<PacketDesc>* in = i > 0 ? links_[i].get() : nullptr;
        Channel<PacketDesc>* out = i + 1 < nodes_.size() ? links_[i + 1].get() : nullptr;
        nodes_[i].task = std::make_unique<NodeTask>(nodes_[i].stage.get(), in, out);
        scheduler_->add_task(nodes_[i].thread, nodes_[i].task.get());
    }
}

AppRunner::~AppRunner() {
    scheduler_->join();
    // Stages go first: they may hold mbufs of the pool (templates, tables).
    nodes_.clear();
    links_.clear();
}

std::string AppRunner::progress_line(double seconds) const {
    uint64_t packets = 0, bytes = 0;
    for (const auto& n : nodes_)
        if (n.stage->kind() == StageKind::Source) {
            packets += n.stage->stats().out.get();
            bytes += n.stage->stats().bytes_out.get();
        }
    char line[160];
    std::snprintf(line, sizeof line, "%7.1f s %14llu packets %9.3f Mpps %9.3f Gb/s", seconds,
                  (unsigned long long)packets, seconds > 0 ? packets / seconds / 1e6 : 0.0,
                  seconds > 0 ? bytes * 8 / seconds / 1e9 : 0.0);
    return line;
}

RunReport AppRunner::run(const RunOptions& opts) {
    using clock = std::chrono::steady_clock;
    scheduler_->start();
    auto next_report = scheduler_->start_time() + std::chrono::seconds(2);
    while (!scheduler_->finished()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (opts.progress && clock::now() >= next_report) {
            opts.progress(progress_line(std::chrono::duration<double>(clock::now() - scheduler_->start_time()).count()));
            next_report += std::chrono::seconds(1);
        }
    }
    scheduler_->join();
    const double seconds =
        std::chrono::duration<double>(scheduler_->end_time() - scheduler_->start_time()).count();
    return collect(seconds);
}

RunReport AppRunner::collect(double seconds) const {
    RunReport r;
    r.app = app_.name;
    r.seconds = seconds;
    r.topology = plan_.topology.name();
    r.threads = scheduler_->threads();
    for (const PlannedLink& l : plan_.links)
        r.channels.push_back(ChannelReport{nodes_[l.from].config->name, nodes_[l.to].config->name,
                                           l.transport, l.capacity, l.hops});
    for (const auto& n : nodes_) {
        const StageStats& st = n.stage->stats();
        StageReport s;
        s.name = n.config->name;
        s.stage = n.config->stage->name;
        s.kind = stage_kind_name(n.stage->kind());
        s.cpu = scheduler_->cpu(n.thread);
        const TileXY xy = plan_.topology.xy(plan_.tile_of_node[static_cast<size_t>(&n - nodes_.data())]);
        s.tile_x = xy.x;
        s.tile_y = xy.y;
        s.in = st.in.get();
        s.out = st.out.get();
        s.drops = st.drops.get();
        s.bytes = st.bytes_out.get();
        s.cycles = st.cycles.get();
        // Busy: the share of the run this node spent in produce()/process() rather than polling
        // empty inputs or waiting for room.
        s.busy = seconds > 0 ? double(s.cycles) / (seconds * double(rte_get_tsc_hz())) : 0.0;
        for (size_t i = 0; i < n.stage->drop_reasons().size(); ++i)
            s.drop_reasons[n.stage->drop_reasons()[i]] = st.reason[i].get();
        for (size_t i = 0; i < n.stage->events().size(); ++i)
            s.events[n.stage->events()[i]] = st.event[i].get();
        if (n.stage->kind() == StageKind::Source) {
            r.packets += s.out;
            r.bytes += s.bytes;
        }
        if (n.stage->kind() == StageKind::Sink) r.delivered += s.out;
        r.drops += s.drops;
        r.stages.push_back(std::move(s));
    }
    r.unaccounted = int64_t(r.packets) - int64_t(r.delivered) - int64_t(r.drops);
    r.pools.push_back(PoolReport{pool_->name(), pool_->capacity(), pool_->available()});
    return r;
}

}  // namespace tp
