#include "framework/metrics/prometheus_families.hpp"

#include <limits>
#include <string>

namespace tp {

const std::vector<double> kLatencyBounds = {0.5e-6, 1e-6, 2e-6, 5e-6, 10e-6, 20e-6, 50e-6, 100e-6,
                                            200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 100e-3};

std::vector<prometheus::ClientMetric::Bucket> fold_latency(const std::vector<LatencyBucket>& buckets) {
    std::vector<prometheus::ClientMetric::Bucket> out;
    for (double le : kLatencyBounds) out.push_back({0, le});
    out.push_back({0, std::numeric_limits<double>::infinity()});
    for (const LatencyBucket& b : buckets) {
        // Compared in microseconds, as the buckets' edges were computed (no rounding across units).
        size_t i = 0;
        while (i < kLatencyBounds.size() && b.upper_us > kLatencyBounds[i] * 1e6 * (1 + 1e-12)) ++i;
        out[i].cumulative_count += b.count;
    }
    for (size_t i = 1; i < out.size(); ++i) out[i].cumulative_count += out[i - 1].cumulative_count;
    return out;
}

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Adds families in order, one sample at a time; a family is created at its first sample.
class Families {
public:
    explicit Families(std::string app) : app_(std::move(app)) {}

    void counter(const std::string& name, const char* help, const Labels& labels, double v) {
        add(name, help, MetricType::Counter, labels).counter.value = v;
    }
    void gauge(const std::string& name, const char* help, const Labels& labels, double v) {
        add(name, help, MetricType::Gauge, labels).gauge.value = v;
    }
    ClientMetric& histogram(const std::string& name, const char* help, const Labels& labels) {
        return add(name, help, MetricType::Histogram, labels);
    }
    std::vector<MetricFamily> take() { return std::move(families_); }

private:
    ClientMetric& add(const std::string& name, const char* help, MetricType type, const Labels& labels) {
        if (families_.empty() || families_.back().name != name) families_.push_back(MetricFamily{name, help, type, {}});
        ClientMetric m;
        m.label.push_back({"app", app_});
        m.label.insert(m.label.end(), labels.begin(), labels.end());
        families_.back().metric.push_back(std::move(m));
        return families_.back().metric.back();
    }
    std::string app_;
    std::vector<MetricFamily> families_;
};

std::string tile_label(int x, int y) { return std::to_string(x) + "," + std::to_string(y); }

Labels node_labels(const StageReport& s, const RunReport& r) {
    Labels l = {{"node", s.name}, {"stage", s.stage}, {"kind", s.kind}, {"tile", tile_label(s.tile_x, s.tile_y)},
                {"cpu", std::to_string(s.cpu)}};
    if (s.node >= 0 && size_t(s.node) < r.tiles.size() && r.tiles[size_t(s.node)].worker >= 0)
        l.push_back({"worker", std::to_string(r.tiles[size_t(s.node)].worker)});
    return l;
}

Labels tile_labels(const TileReport& t) {
    Labels l = {{"node", t.node}, {"role", t.role.empty() ? "stages" : t.role}, {"tile", tile_label(t.tile_x, t.tile_y)},
                {"cpu", std::to_string(t.cpu)}};
    if (t.worker >= 0) l.push_back({"worker", std::to_string(t.worker)});
    return l;
}

void add_nodes(Families& f, const RunReport& r) {
    for (const StageReport& s : r.stages) {
        Labels in = node_labels(s, r), out = in;
        in.push_back({"direction", "in"});
        out.push_back({"direction", "out"});
        f.counter("tilepipe_node_packets_total", "Packets a stage instance took (in) and passed on or delivered (out)", in, double(s.in));
        f.counter("tilepipe_node_packets_total", "", out, double(s.out));
    }
    for (const StageReport& s : r.stages)
        f.counter("tilepipe_node_bytes_total", "Frame bytes of the packets a stage instance passed on or delivered",
                  node_labels(s, r), double(s.bytes));
    for (const StageReport& s : r.stages) {
        // Drops without a declared reason (a failed burst, a full output) are "other".
        uint64_t named = 0;
        for (const auto& [reason, n] : s.drop_reasons) {
            Labels l = node_labels(s, r);
            l.push_back({"reason", reason});
            f.counter("tilepipe_node_dropped_packets_total", "Packets a stage instance dropped, by reason", l, double(n));
            named += n;
        }
        if (s.drops > named || s.drop_reasons.empty()) {
            Labels l = node_labels(s, r);
            l.push_back({"reason", "other"});
            f.counter("tilepipe_node_dropped_packets_total", "Packets a stage instance dropped, by reason", l,
                      double(s.drops > named ? s.drops - named : 0));
        }
    }
    for (const StageReport& s : r.stages)
        f.counter("tilepipe_node_cycles_total", "TSC cycles a stage instance spent in its produce/process calls",
                  node_labels(s, r), double(s.cycles));
    for (const StageReport& s : r.stages)
        f.gauge("tilepipe_node_cycles_per_packet", "Cycles a stage instance spent per packet it handled, over the run so far",
                node_labels(s, r), s.cycles_per_packet());
    for (const StageReport& s : r.stages)
        f.gauge("tilepipe_node_busy_ratio", "Share of the timed window the stage instance's tile spent moving packets",
                node_labels(s, r), s.busy_fraction);
    for (const StageReport& s : r.stages)
        f.counter("tilepipe_node_busy_seconds_total", "Seconds the stage instance's tile spent moving packets (rate() is its busy share)",
                  node_labels(s, r), s.busy_fraction * r.seconds);
}

void add_tiles(Families& f, const RunReport& r) {
    for (const TileReport& t : r.tiles)
        f.counter("tilepipe_tile_packets_total", "Packets a tile took from its inputs (a source's: emitted)", tile_labels(t),
                  double(t.packets));
    for (const TileReport& t : r.tiles)
        f.gauge("tilepipe_tile_busy_ratio", "Share of the timed window the tile spent moving packets", tile_labels(t),
                t.busy_fraction);
    for (const TileReport& t : r.tiles)
        f.counter("tilepipe_tile_busy_seconds_total", "Seconds the tile spent moving packets (rate() is its busy share)",
                  tile_labels(t), t.busy_fraction * r.seconds);
}

void add_links(Families& f, const LiveView& v) {
    const auto labels = [](const ChannelReport& c) {
        return Labels{{"from", c.from}, {"to", c.to}, {"transport", c.transport}};
    };
    for (const ChannelReport& c : v.report.channels)
        f.gauge("tilepipe_link_capacity_items", "Items a link holds at most", labels(c), double(c.capacity));
    for (size_t i = 0; i < v.report.channels.size() && i < v.queued.size(); ++i)
        if (v.queued[i] >= 0)
            f.gauge("tilepipe_link_queued_items", "Items queued in a link now", labels(v.report.channels[i]), double(v.queued[i]));
}

void add_edges(Families& f, const RunReport& r) {
    const auto labels = [](const EdgeReport& e) { return Labels{{"from", e.from}, {"output", e.output}, {"to", e.to}}; };
    for (const EdgeReport& e : r.edges)
        f.counter("tilepipe_edge_packets_total", "Packets a node sent on an edge of the app's graph", labels(e), double(e.packets));
    for (const EdgeReport& e : r.edges)
        f.counter("tilepipe_edge_bytes_total", "Frame bytes a node sent on an edge of the app's graph", labels(e), double(e.bytes));
}

void add_latency(Families& f, const LatencyReport& l) {
    if (l.mode == "off") return;
    ClientMetric& h = f.histogram("tilepipe_latency_seconds",
                                  "End-to-end latency of the sampled packets, source to sink", {});
    h.histogram.sample_count = l.end_to_end.samples;
    h.histogram.sample_sum = l.end_to_end.mean * double(l.end_to_end.samples) * 1e-6;
    h.histogram.bucket = fold_latency(l.buckets);
    const LatencySummary& e = l.end_to_end;
    f.gauge("tilepipe_latency_p50_seconds", "Median end-to-end latency so far", {}, e.p50 * 1e-6);
    f.gauge("tilepipe_latency_p90_seconds", "90th percentile end-to-end latency so far", {}, e.p90 * 1e-6);
    f.gauge("tilepipe_latency_p99_seconds", "99th percentile end-to-end latency so far", {}, e.p99 * 1e-6);
    f.gauge("tilepipe_latency_p999_seconds", "99.9th percentile end-to-end latency so far", {}, e.p999 * 1e-6);
    f.gauge("tilepipe_latency_max_seconds", "Largest end-to-end latency so far", {}, e.max * 1e-6);
}

}  // namespace

std::vector<MetricFamily> prometheus_families(const LiveView& v, const std::string& version) {
    const RunReport& r = v.report;
    Families f(r.app);
    f.gauge("tilepipe_run_info", "The run: tilepipe's version, the topology, the latency rule", 
            {{"version", version}, {"topology", r.header.topology}, {"latency", r.latency.mode}}, 1);
    f.gauge("tilepipe_run_finished", "1 once every tile of the run is done", {}, v.finished ? 1 : 0);
    f.gauge("tilepipe_run_seconds", "The timed window so far: from the first packet emitted", {}, r.seconds);
    f.counter("tilepipe_offered_packets_total", "Packets the sources emitted", {}, double(r.packets));
    f.counter("tilepipe_offered_bytes_total", "Frame bytes the sources emitted", {}, double(r.bytes));
    f.counter("tilepipe_delivered_packets_total", "Packets the sinks took", {}, double(r.delivered));
    f.counter("tilepipe_delivered_bytes_total", "Frame bytes the sinks took", {}, double(r.delivered_bytes));
    f.counter("tilepipe_dropped_packets_total", "Packets the stages dropped", {}, double(r.drops));
    f.counter("tilepipe_source_lost_packets_total", "Packets devices received but never handed to a source", {},
              double(r.lost_before_source));
    add_nodes(f, r);
    add_tiles(f, r);
    add_links(f, v);
    add_edges(f, r);
    add_latency(f, r.latency);
    for (const PoolReport& p : r.pools)
        f.gauge("tilepipe_pool_mbufs", "Mbufs a packet pool holds", {{"pool", p.name}}, double(p.capacity));
    for (const PoolReport& p : r.pools)
        f.gauge("tilepipe_pool_available_mbufs", "Mbufs free in a packet pool now", {{"pool", p.name}}, double(p.available));
    return f.take();
}

}  // namespace tp
