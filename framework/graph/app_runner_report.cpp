// AppRunner, its report half: what a run reports (RunReport: per stage, tile, channel and edge;
// latency; the packets traced) from the stages' and tasks' counters, during the run (live) or
// after the join.
#include "framework/graph/app_runner.hpp"

#include <rte_cycles.h>

#include <algorithm>
#include <string>

namespace tp {

LatencyHistogram AppRunner::latency() const {
    LatencyHistogram all;
    for (const auto& t : tasks_)
        if (const auto* node = dynamic_cast<const NodeTask*>(t.get()); node && node->sink_latency())
            all.merge(node->sink_latency()->histogram());
    return all;
}

LatencyReport AppRunner::latency_report() const {
    const double hz = double(rte_get_tsc_hz());
    LatencyReport l;
    l.mode = app_.latency.str();
    l.tsc_hz = hz;
    const LatencyHistogram all = latency();
    l.end_to_end = LatencySummary::of(all, hz);
    l.buckets = latency_buckets(all, hz);
    for (size_t n = 0; n < tasks_.size(); ++n)
        if (const auto* node = dynamic_cast<const NodeTask*>(tasks_[n].get()); node && node->residence())
            l.nodes.push_back(NodeResidenceReport{plan_.graph.nodes[n].name,
                                                  LatencySummary::of(node->residence()->queue_wait, hz),
                                                  LatencySummary::of(node->residence()->process, hz)});
    return l;
}

namespace {
// Where a sink's packets went, from its parameters: a file (pcap_out), device(s) (port_out), or
// nowhere (drop).
void sink_output(const NodeConfig& nc, StageReport& s) {
    const auto given = [&](const char* name) {
        return nc.stage->find_param(name) != nullptr && !nc.params.get_string(name).empty();
    };
    if (given("file")) {
        s.output = nc.params.get_string("file");
    } else if (given("devices") || given("device")) {
        s.output = nc.params.get_string(given("devices") ? "devices" : "device");
        s.output_is_device = true;
    }
}

// A node without stages gathers workers' packets (collector), hands packets out to workers
// (emitter), or both: a farm's collector that also dispatches to the next farm's workers.
std::string stageless_role(const AppGraph& g, size_t n) {
    const GraphNode& node = g.nodes[n];
    if (node.role == NodeRole::MapCollector) return "collector";
    if (node.role == NodeRole::MapEmitter) return "emitter";
    if (node.role == NodeRole::RankSend) return "send to rank " + std::to_string(node.peer_rank);
    if (node.role == NodeRole::RankReceive) return "receive from rank " + std::to_string(node.peer_rank);
    const bool emits = node.dispatch != Dispatch::Single;
    const bool collects = !emits || node.reorder || g.inputs_of(n).size() > 1;
    return emits && collects ? "collector+emitter" : emits ? "emitter" : "collector";
}
}  // namespace

std::string AppRunner::instance_name(const Instance& in) const {
    // A node running one stage is named for it (parse, farm.0.pass); a worker's chain lists
    // its stages under the node (farm.0/acl).
    const GraphNode& node = plan_.graph.nodes[in.node];
    const std::string& cn = in.config->name;
    const bool named_for_it = node.stages.size() == 1 && node.name.size() >= cn.size() &&
                              node.name.compare(node.name.size() - cn.size(), cn.size(), cn) == 0;
    return named_for_it ? node.name : node.name + "/" + cn;
}

TraceReport AppRunner::trace_report() const {
    TraceReport t;
    if (!trace_) return t;
    t.requested = trace_->packets();
    // The instances of each node, in chain order (the events' stage index).
    std::vector<std::vector<const Instance*>> chain_of(plan_.graph.nodes.size());
    for (const Instance& in : instances_) chain_of[in.node].push_back(&in);
    struct Step {
        uint64_t tsc;
        size_t node;
        TraceEvent e;
    };
    std::vector<std::vector<Step>> steps;
    for (size_t n = 0; n < node_traces_.size(); ++n)
        for (const TraceEvent& e : node_traces_[n]->events()) {
            if (e.packet >= steps.size()) steps.resize(e.packet + 1);
            steps[e.packet].push_back(Step{e.tsc, n, e});
        }
    for (uint32_t p = 0; p < steps.size(); ++p) {
        // One packet's steps in time order: the TSCs of the tiles agree (as latency needs).
        std::stable_sort(steps[p].begin(), steps[p].end(), [](const Step& a, const Step& b) { return a.tsc < b.tsc; });
        TracedPacket traced{p + 1, {}};
        for (const Step& st : steps[p]) {
            const Instance& in = *chain_of[st.node].at(st.e.stage);
            const TileXY xy = plan_.topology.xy(plan_.tile_of_node[st.node]);
            TraceHop h{plan_.graph.nodes[st.node].name, instance_name(in), xy.x, xy.y,
                       scheduler_->cpu(plan_.threads.thread_of_node[st.node]), trace_step_name(st.e.step), ""};
            if (st.e.step == TraceStep::Dropped) h.reason = in.stage->drop_reasons().at(st.e.reason);
            traced.path.push_back(std::move(h));
        }
        t.packets.push_back(std::move(traced));
    }
    return t;
}

NodeTrace* AppRunner::trace_of(size_t node) const { return trace_ ? node_traces_[node].get() : nullptr; }

RunReport AppRunner::collect(double wall_seconds, bool live) const {
    const AppGraph& g = plan_.graph;
    RunReport r;
    r.app = app_.name;
    r.header.topology = plan_.topology.name();
    r.threads = scheduler_->threads();
    for (size_t t = 0; t < r.threads; ++t) {
        const Doorbell* b = scheduler_->bell(t);
        r.waits.push_back({scheduler_->cpu(t), b->wakeups(), b->park_timeouts()});
    }
    // The timed window: first packet emitted to the last a sink took (or, when no sink took
    // any, the last a stage handled: everything was dropped on the way).
    const double hz = double(rte_get_tsc_hz());
    const TrafficClock c = traffic_clock();
    uint64_t end = c.last_sink != 0 ? c.last_sink : std::max(c.last_other, c.last_emit);
    uint64_t last_emit = c.last_emit;
    if (live && !scheduler_->finished()) end = last_emit = rte_rdtsc();  // so far
    // Stamps of different CPUs: a skew between their TSCs must not wrap the difference. A
    // rank's part without sources times from its first stage's first burst.
    const uint64_t start = c.first_emit != 0 ? c.first_emit : c.first_other;
    const auto since_first = [&](uint64_t t) { return t > start ? double(t - start) / hz : 0.0; };
    if (start != 0) {
        r.seconds = since_first(end);
        r.offered_seconds = since_first(last_emit);
    }
    // The same window on the system clock, which processes (ranks) share.
    const auto wall_ns = [&, now = rte_rdtsc(), wall = std::chrono::system_clock::now()](uint64_t t) -> int64_t {
        if (t == 0) return 0;
        const double ago = t < now ? double(now - t) / hz : 0.0;
        return std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count() - int64_t(ago * 1e9);
    };
    r.first_emit_ns = wall_ns(c.first_emit);
    r.last_emit_ns = wall_ns(last_emit);
    r.end_ns = wall_ns(c.last_sink);
    r.setup_s = std::max(0.0, wall_seconds - r.seconds);
    const double window_cycles = r.seconds * hz;
    std::vector<double> busy(g.nodes.size(), 0.0);
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        const GraphNode& node = g.nodes[n];
        const TileXY xy = plan_.topology.xy(plan_.tile_of_node[n]);
        // Polls that moved work fall in the window but for the end-of-stream ones: at most 1.
        busy[n] = window_cycles > 0 ? std::min(1.0, double(tasks_[n]->busy_cycles()) / window_cycles) : 0.0;
        TileReport t;
        t.node = node.name;
        if (node.stages.empty()) t.role = stageless_role(g, n);
        if ((node.role == NodeRole::RankSend || node.role == NodeRole::RankReceive) && rank_links_ != nullptr)
            t.role += ", " + rank_links_->kind(node);  // "send to rank 1, lent"
        t.tile_x = xy.x;
        t.tile_y = xy.y;
        t.cpu = scheduler_->cpu(plan_.threads.thread_of_node[n]);
        if (node.role == NodeRole::MapWorker || (!node.stages.empty() && app_.pipeline[node.stages.front()].pattern >= 0))
            t.worker = static_cast<int>(node.worker);
        t.busy_fraction = busy[n];
        if (const auto* node = dynamic_cast<const NodeTask*>(tasks_[n].get()); node && !live)
            t.stalled_ms = double(node->stalled_cycles()) * 1e3 / hz;
        t.packets = tasks_[n]->passed_packets();
        t.bytes = tasks_[n]->passed_bytes();
        r.tiles.push_back(std::move(t));
    }
    for (const PlannedLink& l : plan_.links)
        r.channels.push_back(ChannelReport{g.nodes[l.from].name, g.nodes[l.to].name, l.transport, l.capacity, l.hops});
    for (const Instance& in : instances_) {
        const StageStats& st = in.stage->stats();
        StageReport s;
        s.name = instance_name(in);
        s.stage = in.config->stage->name;
        s.kind = stage_kind_name(in.stage->kind());
        s.node = static_cast<int>(in.node);
        s.cpu = scheduler_->cpu(plan_.threads.thread_of_node[in.node]);
        const TileXY xy = plan_.topology.xy(plan_.tile_of_node[in.node]);
        s.tile_x = xy.x;
        s.tile_y = xy.y;
        s.in = st.in.get();
        s.out = st.out.get();
        s.drops = st.drops.get();
        s.bytes = st.bytes_out.get();
        s.cycles = st.cycles.get();
        // One definition of busy: the node's. A stage's own share is its cycles per packet.
        s.busy_fraction = busy[in.node];
        if (in.stage->kind() == StageKind::Sink) sink_output(*in.config, s);
        for (size_t i = 0; i < in.stage->drop_reasons().size(); ++i)
            s.drop_reasons[in.stage->drop_reasons()[i]] = st.reason[i].get();
        for (size_t i = 0; i < in.stage->events().size(); ++i)
            s.events[in.stage->events()[i]] = st.event[i].get();
        if (const auto* by_port = dynamic_cast<const SendsByPort*>(in.stage.get()); by_port != nullptr && !live)
            s.ports = by_port->tx_by_port();
        if (in.stage->kind() == StageKind::Source) {
            r.packets += s.out;
            r.bytes += s.bytes;
            s.lost_before = st.lost_before.get();
            r.lost_before_source += s.lost_before;
        }
        if (const auto* tee = dynamic_cast<const Replicator*>(in.stage.get()); tee != nullptr) r.copies += tee->copies_made();
        if (in.stage->kind() == StageKind::Sink) {
            r.delivered += s.out;
            r.delivered_bytes += s.bytes;
        }
        r.drops += s.drops;
        r.stages.push_back(std::move(s));
    }
    collect_edges(r);
    r.latency = latency_report();  // histograms of relaxed counters: readable while tiles run
    // rte_mempool_avail_count adds up the pool and the lcore caches without locks: exact after
    // the join, a few bursts stale while tiles run (DPDK offers it for monitoring).
    for (const auto& p : pools_) r.pools.push_back(PoolReport{p->name(), p->capacity(), p->available()});
    if (live) return r;  // failures and accounting are read after the join
    for (size_t n = 0; n < g.nodes.size(); ++n)
        if (tasks_[n]->failed()) {
            r.failures.push_back(FailureReport{g.nodes[n].name, tasks_[n]->failure(), tasks_[n]->failure_drops()});
            r.drops += tasks_[n]->failure_drops();
        }
    for (size_t n = 0; n < g.nodes.size(); ++n)
        if (tasks_[n]->cut_drops() != 0) {
            r.cut_losses.push_back(CutLoss{g.nodes[n].name, tasks_[n]->cut_drops()});
            r.drops += tasks_[n]->cut_drops();
        }
    r.unaccounted = int64_t(r.packets + r.copies) - int64_t(r.delivered) - int64_t(r.drops);
    return r;
}

}  // namespace tp
