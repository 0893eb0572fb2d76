// The checks that make an AppConfig complete and well-formed, whoever built it (the YAML
// reader, --set, the C++ builder): the pipeline's shape, node names, each stage's parameters
// and the wiring, each error at the place the user wrote.
#include <filesystem>
#include <set>

#include "framework/config/app_config.hpp"
#include "framework/config/app_wiring.hpp"
#include "framework/config/link_settings.hpp"
#include "framework/config/memory_settings.hpp"

namespace tp {

namespace {

// A farm opening the pipeline with a source in each worker: checks what makes one queue per
// worker possible; false when the farm's workers do not start with a source at all.
bool source_farm_ok(const AppConfig& app, const PatternConfig& f) {
    const NodeConfig& src = app.pipeline[f.first];
    if (f.map || src.stage->kind != StageKind::Source) return false;
    if (f.emitter)
        throw LocatedError(f.where, "farm '" + f.name + "' opens the pipeline: its workers read their own queues, "
                                    "so it needs 'emitter: false'");
    if (f.dispatch_given)
        throw LocatedError(f.where, "farm '" + f.name + "' has no dispatch: each worker reads its own queue");
    if (src.stage->find_param("rx_queue") == nullptr)
        throw LocatedError(src.where, "'" + src.stage->name + "' cannot start a farm's workers: each worker must read "
                                      "a queue of its own (use 'port')");
    return true;
}

// Worker w of a farm reads RX queue w with a port source and sends on TX queue w with a port
// sink: `rx_queue` / `tx_queue` are the runner's to set there, and `queues` must reach every
// worker. Checked on every finalize, so `--set` cannot break it.
void check_farm_queue_params(const AppConfig& app) {
    for (const PatternConfig& f : app.patterns) {
        if (f.map) continue;
        for (size_t i = f.first; i < f.last; ++i) {
            const NodeConfig& n = app.pipeline[i];
            for (const char* key : {"rx_queue", "tx_queue"})
                if (n.stage->find_param(key) != nullptr && n.params.given(key))
                    throw LocatedError(n.params.where(key), std::string("worker w of farm '") + f.name + "' uses " +
                                                                (key[0] == 'r' ? "RX" : "TX") + " queue w: drop '" + key + "'");
            if (n.stage->find_param("queues") != nullptr && (n.stage->find_param("rx_queue") != nullptr ||
                                                             n.stage->find_param("tx_queue") != nullptr) &&
                n.params.given("queues") && n.params.get_uint("queues") < f.workers)
                throw LocatedError(n.params.where("queues"), "'queues' must give each of the " + std::to_string(f.workers) +
                                                                 " workers of farm '" + f.name + "' a queue");
        }
    }
}

// `branched` (some node has next:): sinks may stand anywhere, each branch ending in its own;
// wire_app checks that every output is wired and every node fed.
void check_shape(const AppConfig& app, const Location& where, bool branched) {
    const auto& el = app.elements;
    if (el.empty()) throw LocatedError(where, "the pipeline is empty");
    auto kind = [&](size_t node) { return app.pipeline[node].stage->kind; };
    auto misplaced = [&](size_t node, const char* where_it_goes) {
        const NodeConfig& n = app.pipeline[node];
        return LocatedError(n.where, "'" + n.stage->name + "' is a " + stage_kind_name(n.stage->kind) +
                                         " and can only stand at the " + where_it_goes + " of the pipeline");
    };
    // A farm may open the pipeline when it has no emitter and each worker starts with a source
    // reading a queue of its own (a NIC's RSS queues): worker w reads queue w.
    const bool source_farm = el.front().pattern >= 0 && source_farm_ok(app, app.patterns[static_cast<size_t>(el.front().pattern)]);
    if (el.front().node < 0 && !source_farm)
        throw LocatedError(app.patterns[static_cast<size_t>(el.front().pattern)].where,
                           "a pipeline starts with a source, or with a farm without emitter whose workers each "
                           "start with a source reading its own queue (port)");
    const NodeConfig& first = app.pipeline[source_farm ? app.patterns[static_cast<size_t>(el.front().pattern)].first
                                                       : static_cast<size_t>(el.front().node)];
    if (first.stage->kind != StageKind::Source)
        throw LocatedError(first.where, "a pipeline starts with a source; '" + first.stage->name + "' is a " +
                                            stage_kind_name(first.stage->kind));
    for (size_t i = 0; i < el.size(); ++i) {
        const bool last = i + 1 == el.size();
        if (el[i].node >= 0) {
            const auto n = static_cast<size_t>(el[i].node);
            if (i > 0 && kind(n) == StageKind::Source) throw misplaced(n, "start");
            if (!last && !branched && kind(n) == StageKind::Sink) throw misplaced(n, "end");
            continue;
        }
        const PatternConfig& f = app.patterns[static_cast<size_t>(el[i].pattern)];
        if (!f.emitter && i > 0 && el[i - 1].pattern >= 0 && !branched)
            throw LocatedError(f.where, "a farm without emitter must follow a single node, which dispatches to its workers");
        for (size_t n = f.first; n < f.last; ++n) {
            if (kind(n) == StageKind::Source && !(i == 0 && n == f.first)) throw misplaced(n, "start");
            const bool sink_ok = !f.map && (last || branched) && f.collect == "none" && n + 1 == f.last;
            if (kind(n) == StageKind::Sink && !sink_ok)
                throw LocatedError(app.pipeline[n].where,
                                   f.map ? "a map worker runs processors (its collector hands the task on)"
                                         : "a worker may end with a sink only in the last farm, with collect: none");
        }
    }
    if (branched) return;
    const PipelineElement& end = el.back();
    const size_t tail = end.node >= 0 ? static_cast<size_t>(end.node) : app.patterns[static_cast<size_t>(end.pattern)].last - 1;
    // A farm opening the pipeline may be all of it, its workers ending in sinks.
    if ((el.size() < 2 && !source_farm) || kind(tail) != StageKind::Sink)
        throw LocatedError(app.pipeline[tail].where, "a pipeline ends with a sink (e.g. drop, pcap_out); '" +
                                                         app.pipeline[tail].stage->name + "' is a " +
                                                         stage_kind_name(kind(tail)));
}

void name_nodes(AppConfig& app) {
    std::set<std::string> taken;
    for (auto& n : app.pipeline)
        if (!n.name.empty() && !taken.insert(n.name).second)
            throw LocatedError(n.where, "duplicate node name '" + n.name + "'");
    for (auto& n : app.pipeline) {
        if (!n.name.empty()) continue;
        std::string name = n.stage->name;
        for (int k = 2; taken.count(name) != 0; ++k) name = n.stage->name + "_" + std::to_string(k);
        n.name = name;
        taken.insert(name);
    }
    for (auto& f : app.patterns)
        if (!f.name.empty() && !taken.insert(f.name).second)
            throw LocatedError(f.where, "duplicate name '" + f.name + "'");
    for (auto& f : app.patterns) {
        if (!f.name.empty()) continue;
        const std::string base = f.map ? "map" : "farm";
        std::string name = base;
        for (int k = 2; taken.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
        f.name = name;
        taken.insert(name);
    }
}

}  // namespace

void finalize(AppConfig& app) {
    // Files a config reads are found beside it, so an app runs from any working directory; a
    // value from the command line (--set, --pcap) stays relative to the working directory.
    const std::filesystem::path dir = std::filesystem::path(app.file).parent_path();
    for (auto& n : app.pipeline) {
        ParamValues v;
        v.set_node_location(n.where);
        for (const auto& [key, text_loc] : n.raw) {
            const ParamSpec* spec = n.stage->find_param(key);
            if (spec == nullptr)
                throw LocatedError(text_loc.second, "unknown parameter '" + key + "' for stage '" +
                                                        n.stage->name + "'");
            std::string text = text_loc.first;
            if (spec->reads_file && !text.empty() && !dir.empty() && text_loc.second.file == app.file &&
                std::filesystem::path(text).is_relative())
                text = (dir / text).lexically_normal().string();
            v.set(*spec, text, text_loc.second);
        }
        for (const auto& spec : n.stage->params) v.set_default(spec);
        n.params = std::move(v);
        n.worker_params.clear();
        for (const auto& [w, raw] : n.worker_raw) {
            const PatternConfig& f = app.patterns.at(static_cast<size_t>(n.pattern));
            if (w >= f.workers)
                throw LocatedError(raw.begin()->second.second,
                                   (f.map ? "map '" : "farm '") + f.name + "' has " + std::to_string(f.workers) +
                                       " worker(s), numbered from 0");
            ParamValues pv = n.params;
            for (const auto& [key, text_loc] : raw) pv.set(*n.stage->find_param(key), text_loc.first, text_loc.second);
            n.worker_params.emplace(w, std::move(pv));
        }
        if (!n.worker_tile.empty()) {
            const PatternConfig& f = app.patterns.at(static_cast<size_t>(n.pattern));
            const auto& [w, tile] = *n.worker_tile.rbegin();  // the highest worker named
            if (w >= f.workers)
                throw LocatedError(tile.second, (f.map ? "map '" : "farm '") + f.name + "' has " + std::to_string(f.workers) +
                                                    " worker(s), numbered from 0");
        }
    }
    check_farm_queue_params(app);
    check_worker_memory(app);
    check_link_settings(app);
}

void check_app(AppConfig& app) {
    for (const PatternConfig& f : app.patterns)
        if (f.collect == "ordered" && !f.emitter)
            throw LocatedError(f.where, "collect: ordered needs the emitter (it numbers the packets the collector restores)");
    check_shape(app, Location{app.file, 1, 1}, app_branches(app));
    finalize(app);
    wire_app(app);
}

void complete_app(AppConfig& app, const Location& where) {
    name_nodes(app);  // first, so shape errors can name farms
    if (app.elements.empty()) throw LocatedError(where, "the pipeline is empty");
    check_app(app);
}

void check_stage_params(const AppConfig& app, const std::vector<bool>& only) {
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        if (!only.empty() && !only[i]) continue;
        const NodeConfig& n = app.pipeline[i];
        if (n.stage->check_params) n.stage->check_params(n.params);
        if (n.stage->check_data_room) n.stage->check_data_room(n.params, app.pool.data_room);
        for (const auto& [w, p] : n.worker_params) {
            if (n.stage->check_params) n.stage->check_params(p);
            if (n.stage->check_data_room) n.stage->check_data_room(p, app.pool.data_room);
        }
    }
}

}  // namespace tp
