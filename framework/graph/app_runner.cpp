#include "framework/graph/app_runner.hpp"

#include <spdlog/spdlog.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "framework/channel/channel_factory.hpp"
#include "framework/channel/detail/node_memory.hpp"
#include "framework/graph/app_pools.hpp"
#include "framework/graph/chaos_plan.hpp"
#include "framework/graph/worker_params.hpp"
#include "framework/metrics/emit_plan.hpp"
#include "framework/metrics/port_tx.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/idle_mode.hpp"
#include "framework/runtime/not_std_exception.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/stage/replicator.hpp"

namespace tp {

namespace {
// Tasks a map keeps in flight: enough to overlap multicast, work and collection.
constexpr uint32_t kMapSlots = 64;
}  // namespace

EalOptions eal_options_for(const AppConfig& app, const AppPlan& plan) {
    EalOptions o;
    o.memory_bytes = app_pools_footprint(app, plan);
    for (const GraphNode& g : plan.graph.nodes)  // a link from a rank on this host attaches lent buffers to these
        if (g.role == NodeRole::RankReceive && app.rank_links != "messages") o.memory_bytes += MbufPool::footprint(rank_link_header_spec());
    for (const GraphNode& g : plan.graph.nodes)
        for (size_t i : g.stages) {
            const NodeConfig& n = app.pipeline[i];
            const ParamValues& p = n.pattern >= 0 ? n.params_of(g.worker) : n.params;
            if (n.stage->memory_hint) o.memory_bytes += n.stage->memory_hint(p);
            if (n.stage->pci_devices)
                for (auto& d : n.stage->pci_devices(p))
                    if (std::find(o.pci_devices.begin(), o.pci_devices.end(), d) == o.pci_devices.end())
                        o.pci_devices.push_back(std::move(d));
        }
    return o;
}

AppRunner::AppRunner(const AppConfig& app) : AppRunner(app, plan_app(app)) {}

AppRunner::AppRunner(const AppConfig& app, AppPlan plan, RankLinkTasks* rank_links)
    : app_(app), plan_(std::move(plan)), rank_links_(rank_links) {
    const std::vector<int>& thread_cpus = plan_.threads.cpu_of_thread;
    scheduler_ = std::make_unique<Scheduler>(thread_cpus, idle_backoff(app_.idle, plan_.oversubscribed()));

    // `memory:` at setup only: pages are bound (and moved) before a tile runs.
    memory_ = plan_memory(app_, plan_);
    pools_ = make_app_pools(app_, plan_, memory_, [this](size_t i, MbufPoolSpec& spec) {
        if (rank_links_ != nullptr) rank_links_->place_pool(i, spec);
    });
    if (app_.trace != 0) {  // every mbuf starts untraced: the trace field is read at every stage
        trace_ = std::make_unique<PacketTrace>(app_.trace);
        for (const auto& p : pools_) trace_->clear_pool(p->get());
        for (size_t n = 0; n < plan_.graph.nodes.size(); ++n) node_traces_.push_back(std::make_unique<NodeTrace>(*trace_));
    }
    if (memory_.bind)
        for (size_t i = 0; i < pools_.size(); ++i) note_bound(bind_mempool(pools_[i]->get(), memory_.pools[i]));

    // A start that fails past the first open() closes what opened (newest first) before the
    // members go: files flush and readers join before PendingOutputs removes the files.
    try {
        start_stages();
    } catch (...) {
        close_opened();
        throw;
    }
    if (unplaced_ > 1) spdlog::warn("memory: {} of {} areas are not placed (the first one's reason above)", unplaced_, bound_.size());
}

void AppRunner::start_stages() {
    const AppGraph& g = plan_.graph;
    unsigned source_port = 0;
    std::map<const NodeConfig*, uint8_t> port_of_source;  // a farm's sources share one port id
    std::vector<std::vector<Stage*>> chains(g.nodes.size());
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        for (size_t i : g.nodes[n].stages) {
            const NodeConfig& nc = app_.pipeline[i];
            // Stage state: what create() and open() allocate on fresh pages follows the node's setting.
            std::optional<ThreadMemoryScope> state_memory;
            if (memory_.bind) state_memory.emplace(memory_.node[n]);
            if (state_memory && !state_memory->error().empty() && unplaced_++ == 0)
                spdlog::warn("memory: {}'s state is not placed ({}): {}", nc.name, describe(memory_.node[n]), state_memory->error());
            instances_.push_back(Instance{&nc, n, create_stage(nc, g.nodes[n].name, worker_params(app_, nc, g.nodes[n]))});
            Stage& st = *instances_.back().stage;
            StageEnv env;
            env.pool = pools_[memory_.pool_of_node[n]].get();
            env.outputs = outputs_.get();
            env.node_name = nc.name;
            env.socket = eal_socket_of(memory_.node[n]);
            env.bell = scheduler_->bell(plan_.threads.thread_of_node[n]);
            if (st.kind() == StageKind::Source) {
                auto [it, fresh] = port_of_source.try_emplace(&nc, static_cast<uint8_t>(source_port));
                if (fresh && ++source_port > PacketDesc::kPortMax + 1u)
                    throw std::runtime_error(nc.name + ": an app has at most " + std::to_string(PacketDesc::kPortMax + 1) +
                                             " sources (the descriptor's input port)");
                env.port = it->second;
            }
            open_stage(instances_.back(), env);
            chains[n].push_back(&st);
        }
    }

    // The network's queues, like channel buffers, follow the node that pops them.
    networks_ = std::make_unique<AppNetworks>(plan_, memory_.bind ? &memory_.node : nullptr);
    note_bound(networks_->bound_memory());
    for (size_t e = 0; e < g.edges.size(); ++e) {
        const GraphEdge& edge = g.edges[e];
        ChannelSpec cs;
        cs.transport = edge.transport;
        cs.capacity = edge.capacity;
        // A channel's buffers belong to its receiver (the node polling them).
        const MemoryPlace& to_place = memory_.node[edge.to];
        cs.socket = eal_socket_of(to_place);
        std::optional<detail::NodeMemoryPlacement> placement;
        std::optional<ThreadMemoryScope> heap_memory;
        if (memory_.bind) placement.emplace(to_place), heap_memory.emplace(to_place);
        Link link;
        Doorbell* bells[2] = {nullptr, nullptr};
        const size_t from = plan_.threads.thread_of_node[edge.from], to = plan_.threads.thread_of_node[edge.to];
        if (from != to) bells[0] = scheduler_->bell(from), bells[1] = scheduler_->bell(to);
        try {
            if (edge.words) {
                link.words = networks_->word_channel(e);  // null: not on the app's network
                if (!link.words) link.words = make_word_channel(cs);
                link.words->set_bells(bells[0], bells[1]);
            } else {
                link.desc = networks_->desc_channel(e);
                if (!link.desc) link.desc = make_desc_channel(cs);
                link.desc->set_bells(bells[0], bells[1]);
            }
        } catch (const std::invalid_argument& ex) {
            throw LocatedError(g.nodes[edge.to].where, ex.what());
        }
        if (placement) {
            std::vector<BoundArea> areas;
            for (const auto& a : placement->areas())
                areas.push_back({"channel " + g.nodes[edge.from].name + " -> " + g.nodes[edge.to].name, a.addr, a.bytes, to_place, a.error});
            note_bound(std::move(areas));
        }
        links_.push_back(std::move(link));
    }
    map_slots_.resize(app_.patterns.size());
    for (size_t p = 0; p < app_.patterns.size(); ++p)
        if (app_.patterns[p].map) {
            // A map's task slots are its emitter's state (it fills them; the workers read them).
            std::optional<ThreadMemoryScope> slots_memory;
            for (size_t n = 0; n < g.nodes.size() && memory_.bind && !slots_memory; ++n)
                if (g.nodes[n].role == NodeRole::MapEmitter && g.nodes[n].pattern == static_cast<int>(p)) slots_memory.emplace(memory_.node[n]);
            map_slots_[p] = std::make_unique<MapTaskSlots>(kMapSlots, app_.patterns[p].workers);
        }
    credits_.resize(g.nodes.size());
    for (const GraphNode& node : g.nodes)
        if (node.reorder && node.numbered_by >= 0 && g.nodes[static_cast<size_t>(node.numbered_by)].stamp_sequence)
            credits_[static_cast<size_t>(node.numbered_by)] = std::make_unique<SequenceCredit>();
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        tasks_.push_back(make_task(n, chains[n]));
        scheduler_->add_task(plan_.threads.thread_of_node[n], tasks_.back().get());
    }
    // Every stage opened and every channel exists: the outputs take their names now.
    outputs_->commit();
}

std::string AppRunner::stage_name(const Instance& in) const {
    const std::string& node = plan_.graph.nodes[in.node].name;
    const std::string& name = in.config->name;
    const std::string kind = in.config->stage->name == name ? "" : " (" + in.config->stage->name + ")";
    return node == name ? "stage '" + name + "'" + kind : "stage '" + name + "'" + kind + " of node '" + node + "'";
}

// As open_stage: what a constructor throws without a place (an allocation the host cannot give)
// is the node's.
std::unique_ptr<Stage> AppRunner::create_stage(const NodeConfig& nc, const std::string& node, const ParamValues& params) {
    const auto failed = [&](const std::string& why) {
        return LocatedError(nc.where, "'" + node + "' (" + nc.stage->name + ") cannot be built: " + why);
    };
    try {
        return nc.stage->create(params);
    } catch (const LocatedError&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw failed("it needs more memory than the host gives (std::bad_alloc): see its parameters' sizes");
    } catch (const std::exception& e) {
        throw failed(e.what());
    } catch (...) {
        throw failed(kNotStdException);
    }
}

void AppRunner::open_stage(Instance& in, StageEnv& env) {
    try {
        in.stage->open(env);
    } catch (const LocatedError&) {
        throw;  // it names its place (a parameter, a line of a file the stage reads)
    } catch (const std::exception& e) {
        throw LocatedError(in.config->where, stage_name(in) + " failed to open: " + e.what());
    } catch (...) {
        throw LocatedError(in.config->where, stage_name(in) + " failed to open: " + std::string(kNotStdException));
    }
    ++opened_;
}

void AppRunner::close_opened() noexcept {
    // Newest first, as a stage may rely on one opened before it; a failure here is logged and
    // the others still close (the error that ended the start is the one reported).
    while (opened_ != 0) {
        const Instance& in = instances_[--opened_];
        try {
            in.stage->close();
        } catch (const std::exception& e) {
            spdlog::error("{} failed to close: {}", stage_name(in), e.what());
        } catch (...) {
            spdlog::error("{} failed to close: {}", stage_name(in), kNotStdException);
        }
    }
}

void AppRunner::note_bound(std::vector<BoundArea> areas) {
    for (BoundArea& a : areas) {
        // A host that refuses mbind (a container without CAP_SYS_NICE) refuses every area: say it once.
        if (a.error.empty()) spdlog::debug("memory: {} ({} bytes at {}) {}", a.what, a.bytes, a.addr, describe(a.place));
        else if (!a.warned && unplaced_++ == 0) spdlog::warn("memory: {} is not placed ({}): {}", a.what, describe(a.place), a.error);
        bound_.push_back(std::move(a));
    }
}

std::unique_ptr<Task> AppRunner::make_task(size_t n, std::vector<Stage*> chain) {
    const AppGraph& g = plan_.graph;
    const GraphNode& node = g.nodes[n];
    std::vector<Channel<PacketDesc>*> desc_in, desc_out;
    std::vector<int> branch_of_out;  // per desc output: the stage output it carries (-1: none)
    std::vector<Channel<uint64_t>*> words_in, words_out;
    Channel<uint64_t>* freed = nullptr;
    for (size_t e : g.inputs_of(n)) {
        if (g.edges[e].freed) freed = links_[e].words.get();
        else if (g.edges[e].words) words_in.push_back(links_[e].words.get());
        else desc_in.push_back(links_[e].desc.get());
    }
    for (size_t e : g.outputs_of(n)) {
        if (g.edges[e].freed) freed = links_[e].words.get();
        else if (g.edges[e].words) words_out.push_back(links_[e].words.get());
        else {
            desc_out.push_back(links_[e].desc.get());
            branch_of_out.push_back(g.edges[e].output);
        }
    }
    switch (node.role) {
        case NodeRole::MapEmitter:
            return std::make_unique<MapEmitterTask>(*map_slots_[static_cast<size_t>(node.pattern)], desc_in, words_out, freed);
        case NodeRole::MapWorker: {
            // Outputs in edge order: the tree children, then the collector (app_graph.cpp).
            Channel<uint64_t>* to_collector = words_out.back();
            words_out.pop_back();
            return std::make_unique<MapWorkerTask>(*map_slots_[static_cast<size_t>(node.pattern)], node.worker,
                                                   std::move(chain), words_in.at(0), words_out, to_collector, trace_of(n));
        }
        case NodeRole::MapCollector:
            return std::make_unique<MapCollectorTask>(*map_slots_[static_cast<size_t>(node.pattern)], words_in,
                                                      desc_out.at(0), freed);
        case NodeRole::RankSend:
        case NodeRole::RankReceive:
            if (rank_links_ == nullptr) throw std::logic_error(node.name + ": a link between ranks needs an MPI run");
            if (node.role == NodeRole::RankSend) return rank_links_->make_send(node, desc_in.at(0), *pools_[memory_.pool_of_node[n]]);
            return rank_links_->make_receive(node, desc_out.at(0), *pools_[memory_.pool_of_node[n]]);
        case NodeRole::Stages: break;
    }
    NodeTaskSpec ts;
    ts.chain = std::move(chain);
    ts.inputs = desc_in;
    ts.outputs = desc_out;
    ts.dispatch = ts.outputs.size() > 1 || node.dispatch == Dispatch::Branch ? node.dispatch : Dispatch::Single;
    if (node.dispatch == Dispatch::Branch) {
        // Every output of the stage is wired (wire_app): each maps to its edge's channel.
        ts.branch_outputs.assign(branch_of_out.size(), 0);
        for (size_t o = 0; o < branch_of_out.size(); ++o) ts.branch_outputs.at(static_cast<size_t>(branch_of_out[o])) = static_cast<uint16_t>(o);
        ts.replicator = dynamic_cast<Replicator*>(ts.chain.back());
    }
    if (prefetches_bursts(app_, node)) {
        ts.prefetch_burst = true;
        ts.prefetch_data_at = static_cast<uint32_t>(sizeof(rte_mbuf) + rte_pktmbuf_priv_size(pools_[memory_.pool_of_node[n]]->get()) +
                                                    RTE_PKTMBUF_HEADROOM);
    }
    ts.stamp_sequence = node.stamp_sequence;
    ts.report_drops = node.report_drops;
    ts.latency = app_.latency;
    ts.own_pool = memory_.pool_of_node[n] != 0;
    ts.trace = trace_of(n);
    if (chaos_stall_node(app_, g) == n) ts.stall.emplace(app_.chaos.after_packets, app_.chaos.stall_ms);
    if (node.reorder) {
        // Bound on numbers in flight: everything the farm's queues and bursts can hold.
        uint64_t window = 4 * kBurstMax;
        for (const GraphEdge& edge : g.edges) {
            window += edge.capacity + kBurstMax;
            // A link to another rank also holds the other rank's queue and the messages in flight.
            if (g.nodes[edge.to].role == NodeRole::RankSend || g.nodes[edge.from].role == NodeRole::RankReceive)
                window += edge.capacity + (kRankLinkCredits + 2) * kRankLinkMessagePackets;
        }
        ts.reorder_window = static_cast<uint32_t>(window);
        if (node.numbered_by >= 0) {
            if (SequenceCredit* c = credits_[static_cast<size_t>(node.numbered_by)].get()) {
                // The dispatcher keeps at most `window` numbers out; after a stop request it
                // drains what is upstream of it regardless, which the app's own queues bound
                // by as much again (a map or another rank upstream may hold more: the
                // collector then fails as it did before the credit, counting every packet).
                c->allowance = static_cast<uint32_t>(window);
                ts.reorder_window = static_cast<uint32_t>(2 * window);
                const size_t from = plan_.threads.thread_of_node[static_cast<size_t>(node.numbered_by)];
                if (from != plan_.threads.thread_of_node[n]) c->dispatcher_bell = scheduler_->bell(from);
                ts.releasing = c;
            }
        }
    }
    if (node.stamp_sequence) ts.numbering = credits_[n].get();
    return std::make_unique<NodeTask>(std::move(ts));
}

AppRunner::~AppRunner() {
    // Tiles close their stages as the stream ends; a runner that never ran closes them here.
    if (!ran_) close_opened();
    scheduler_->join();
    // Stages go first: they may hold mbufs of the pools (templates, tables).
    tasks_.clear();
    instances_.clear();
    links_.clear();
}

namespace {
// UTC, ISO 8601, to the second: "2026-11-25T09:37:55Z".
std::string utc_iso8601(std::chrono::system_clock::time_point t) {
    const std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char s[32];
    std::strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return s;
}

}  // namespace

AppRunner::TrafficClock AppRunner::traffic_clock() const {
    TrafficClock c;
    for (const auto& in : instances_) {
        const StageStats& st = in.stage->stats();
        const uint64_t first = st.first_tsc.get(), last = st.last_tsc.get();
        if (first == 0) continue;
        if (in.stage->kind() == StageKind::Source) {
            c.first_emit = c.first_emit == 0 ? first : std::min(c.first_emit, first);
            c.last_emit = std::max(c.last_emit, last);
            continue;
        }
        if (in.stage->kind() == StageKind::Sink) c.last_sink = std::max(c.last_sink, last);
        else c.last_other = std::max(c.last_other, last);
        c.first_other = c.first_other == 0 ? first : std::min(c.first_other, first);
    }
    return c;
}

ProgressSample AppRunner::progress_sample() const {
    ProgressSample p;
    for (const auto& in : instances_)
        if (in.stage->kind() == StageKind::Source) {
            p.packets += in.stage->stats().out.get();
            p.bytes += in.stage->stats().bytes_out.get();
        }
    const TrafficClock c = traffic_clock();
    const uint64_t now = rte_rdtsc();
    if (c.first_emit != 0 && now > c.first_emit) p.seconds = double(now - c.first_emit) / double(rte_get_tsc_hz());
    return p;
}

EmitPlan AppRunner::emit_plan() const {
    // Summed over the sources; a length (or a loop size) is known only when every source knows it.
    EmitPlan sum;
    bool length = true, loops = true;
    for (const auto& in : instances_) {
        if (in.stage->kind() != StageKind::Source) continue;
        const auto* planned = dynamic_cast<const PlansEmission*>(in.stage.get());
        const EmitPlan p = planned != nullptr ? planned->emit_plan() : EmitPlan{};
        length &= p.packets != 0;
        loops &= p.per_loop != 0;
        sum.packets += p.packets;
        sum.per_loop += p.per_loop;
        sum.loops = std::max(sum.loops, p.loops);
    }
    if (!length) sum.packets = 0;
    if (!loops) sum.per_loop = sum.loops = 0;
    return sum;
}

RunReport AppRunner::run(const RunOptions& opts) {
    using clock = std::chrono::steady_clock;
    const auto wall_start = std::chrono::system_clock::now();
    ran_ = true;
    scheduler_->start();
    started_at_.store(scheduler_->start_time().time_since_epoch().count(), std::memory_order_release);
    auto next_report = scheduler_->start_time() + opts.progress_after;
    const EmitPlan plan = opts.progress ? emit_plan() : EmitPlan{};
    ProgressSample before;
    int noticed = 0;  // signal notices given: the stop, then the cut
    while (!scheduler_->finished()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (opts.tick) opts.tick();
        if (opts.notice && noticed == 0 && stop_signal() != 0) {
            opts.notice("stopping the sources; what is in flight drains to the sinks (a second signal cuts it short)");
            noticed = 1;
        }
        if (opts.notice && noticed == 1 && cut_requested()) {
            opts.notice("cutting the run short: what is still in flight is freed and counted as lost");
            noticed = 2;
        }
        if (opts.progress && clock::now() >= next_report) {
            const ProgressSample now = progress_sample();
            opts.progress(format_progress(now, before, plan));
            before = now;
            next_report += opts.progress_every;
        }
    }
    scheduler_->join();
    // A second signal stopped the tiles where they were: free and count what is in flight.
    const bool cut_short = cut_requested() && scheduler_->finish_cut() != 0;
    const int signal = stop_signal();
    // A failed tile asked the run to stop; the request ends with the run that made it.
    for (const auto& t : tasks_)
        if (t->failed()) clear_stop_request();
    RunReport r = collect(std::chrono::duration<double>(clock::now() - created_).count());
    r.trace = trace_report();
    spdlog::debug("threads ran {:.6f} s, traffic flowed {:.6f} s of them",
                  std::chrono::duration<double>(scheduler_->end_time() - scheduler_->start_time()).count(), r.seconds);
    r.header.start_time = utc_iso8601(wall_start);
    r.header.interrupted = signal != 0;
    r.header.signal = signal;
    r.header.cut_short = cut_short;
    return r;
}

}  // namespace tp
