#include "framework/config/app_config.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "framework/channel/channel_factory.hpp"
#include "framework/config/yaml_location.hpp"
#include "framework/topology/placement.hpp"

namespace tp {

namespace {

Location at(const std::string& file, const YAML::Mark& m) { return yaml_location(file, m); }

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

bool valid_name(const std::string& n) {
    if (n.empty()) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
        throw LocatedError(at(file_, n.Mark()), msg);
    }

    std::string scalar(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, what + " must be a single value");
        return n.Scalar();
    }

    uint64_t uint(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const {
        const std::string s = scalar(n, what);
        ParamSpec spec{what, ParamType::Uint};
        ParamValues v;
        v.set(spec, s, at(file_, n.Mark()));
        const uint64_t x = v.get_uint(what);
        if (x < lo || x > hi)
            fail(n, what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                        ", got " + s);
        return x;
    }

    void pool(const YAML::Node& n, PoolConfig& p) const {
        if (!n.IsMap()) fail(n, "pool must be a mapping (mbufs, cache, data_room)");
        for (auto it = n.begin(); it != n.end(); ++it) {
            const std::string k = scalar(it->first, "key");
            if (k == "mbufs") p.mbufs = static_cast<uint32_t>(uint(it->second, "pool.mbufs", 64, 1u << 26));
            else if (k == "cache") p.cache = static_cast<uint32_t>(uint(it->second, "pool.cache", 0, 512));
            else if (k == "data_room")
                p.data_room = static_cast<uint32_t>(uint(it->second, "pool.data_room", 128, 65000));
            else fail(it->first, "unknown key 'pool." + k + "' (known: mbufs, cache, data_room)");
        }
    }

    void runtime(const YAML::Node& n, AppConfig& app) const {
        if (!n.IsMap()) fail(n, "runtime must be a mapping (threads, fuse, idle)");
        for (auto it = n.begin(); it != n.end(); ++it) {
            const std::string k = scalar(it->first, "key");
            if (k == "threads") {
                app.threads = scalar(it->second, "runtime.threads");
                if (app.threads != "auto" && app.threads != "per_tile")
                    fail(it->second, "runtime.threads must be auto or per_tile, got '" + app.threads + "'");
            } else if (k == "fuse") {
                app.fuse = scalar(it->second, "runtime.fuse");
                if (app.fuse != "auto" && app.fuse != "always" && app.fuse != "never")
                    fail(it->second, "runtime.fuse must be auto, always or never, got '" + app.fuse + "'");
            } else if (k == "idle") {
                app.idle = scalar(it->second, "runtime.idle");
                // The modes framework/runtime/idle_mode.hpp maps to a back-off.
                check_choice(it->second, "runtime.idle", app.idle, {"auto", "spin", "park"});
            } else {
                fail(it->first, "unknown key 'runtime." + k + "' (known: threads, fuse, idle)");
            }
        }
    }

    NodeConfig node(const YAML::Node& n) const {
        NodeConfig nc;
        nc.where = at(file_, n.Mark());
        if (n.IsScalar()) {  // "- drop": a stage with its defaults
            nc.stage = stage(n, n.Scalar());
            return nc;
        }
        if (!n.IsMap()) fail(n, "a pipeline entry must be a mapping with a 'stage' key, or a stage name");
        const YAML::Node st = n["stage"];
        if (!st) fail(n, "pipeline entry has no 'stage' key");
        nc.stage = stage(st, scalar(st, "stage"));
        nc.where = at(file_, st.Mark());
        for (auto it = n.begin(); it != n.end(); ++it) {
            const std::string k = scalar(it->first, "key");
            const YAML::Node v = it->second;  // a copy: it->second lives in a temporary proxy
            if (k == "stage") continue;
            if (k == "name") {
                nc.name = scalar(v, "name");
                if (!valid_name(nc.name))
                    fail(v, "node name '" + nc.name + "' may use only letters, digits, '_' and '-'");
            } else if (k == "transport") {
                nc.transport = scalar(v, "transport");
                check_transport(v, nc.transport);
            } else if (k == "queue") {
                nc.queue = static_cast<uint32_t>(uint(v, "queue", 2, 1u << 20));
                check_pow2(v, nc.queue);
            } else if (k == "tile") {
                if (!v.IsSequence() || v.size() != 2)
                    fail(v, "tile must be a pair [x, y]");
                nc.tile = TileXY{static_cast<int>(uint(v[0], "tile x", 0, 1023)),
                                 static_cast<int>(uint(v[1], "tile y", 0, 1023))};
            } else {
                if (nc.stage->find_param(k) == nullptr)
                    fail(it->first, "unknown parameter '" + k + "' for stage '" + nc.stage->name +
                                        "' (known: " + param_names(*nc.stage) + ")");
                if (!v.IsScalar() || v.Tag() == "tag:yaml.org,2002:null")
                    fail(v, "parameter '" + k + "' must be a single value");
                nc.raw[k] = {v.Scalar(), at(file_, v.Mark())};
            }
        }
        return nc;
    }

    // `- farm: {...}` or `- map: {...}`: its worker stages are appended to app.pipeline in place.
    void pattern(const YAML::Node& n, AppConfig& app, bool map) const {
        const std::string kind = map ? "map" : "farm";
        const std::string keys = map ? "name, workers, multicast, transport, queue, worker"
                                     : "name, workers, dispatch, collect, emitter, transport, queue, worker";
        if (!n.IsMap()) fail(n, kind + " must be a mapping (" + keys + ")");
        PatternConfig f;
        f.map = map;
        f.where = at(file_, n.Mark());
        YAML::Node worker;
        bool has_worker = false;
        for (auto it = n.begin(); it != n.end(); ++it) {
            const std::string k = scalar(it->first, "key");
            const YAML::Node v = it->second;  // a copy: it->second lives in a temporary proxy
            if (k == "name") {
                f.name = scalar(v, "name");
                if (!valid_name(f.name)) fail(v, kind + " name '" + f.name + "' may use only letters, digits, '_' and '-'");
            } else if (k == "workers") f.workers = static_cast<uint32_t>(uint(v, "workers", 1, map ? 64 : 1024));
            else if (k == "dispatch" && !map) {
                f.dispatch = scalar(v, "dispatch");
                f.dispatch_given = true;
                check_choice(v, "dispatch", f.dispatch, {"round_robin", "on_demand", "flow_hash"});
            } else if (k == "collect" && !map) {
                f.collect = scalar(v, "collect");
                check_choice(v, "collect", f.collect, {"unordered", "ordered", "none"});
            } else if (k == "emitter" && !map) {
                const std::string e = scalar(v, "emitter");
                if (e != "true" && e != "false") fail(v, "emitter must be true or false");
                f.emitter = e == "true";
            } else if (k == "multicast" && map) {
                f.multicast = scalar(v, "multicast");
                check_choice(v, "multicast", f.multicast, {"linear", "tree"});
            } else if (k == "transport") {
                f.transport = scalar(v, "transport");
                check_transport(v, f.transport);
            } else if (k == "queue") {
                f.queue = static_cast<uint32_t>(uint(v, "queue", 2, 1u << 20));
                check_pow2(v, f.queue);
            } else if (k == "worker") {
                worker = v;
                has_worker = true;
            } else fail(it->first, "unknown " + kind + " key '" + k + "' (known: " + keys + ")");
        }
        if (!has_worker) fail(n, kind + " has no 'worker:' (the stages each worker runs)");
        YAML::Node chain = worker;
        if (worker.IsMap()) {
            if (map || !worker["pipeline"] || worker.size() != 1)
                fail(worker, map ? "a map worker is a list of stages"
                                 : "worker must be a list of stages, or {pipeline: [stages]} for one tile per stage");
            f.worker_pipeline = true;
            chain = worker["pipeline"];
        }
        if (!chain.IsSequence() || chain.size() == 0) fail(chain, "a " + kind + " worker needs at least one stage");
        if (f.collect == "ordered" && !f.emitter)
            fail(n, "collect: ordered needs the emitter (it numbers the packets the collector restores)");
        f.first = app.pipeline.size();
        for (const auto& s : chain) {
            if (s.IsMap() && (s["farm"] || s["map"])) fail(s, "patterns do not nest; a farm worker may run a pipeline of stages");
            app.pipeline.push_back(node(s));
            app.pipeline.back().pattern = static_cast<int>(app.patterns.size());
        }
        f.last = app.pipeline.size();
        app.elements.push_back(PipelineElement{-1, static_cast<int>(app.patterns.size())});
        app.patterns.push_back(std::move(f));
    }

    void check_transport(const YAML::Node& n, const std::string& t) const {
        for (const auto& known : transport_names())
            if (known == t) return;
        fail(n, "unknown transport '" + t + "' (known: " + join(transport_names()) + ")");
    }

    void check_choice(const YAML::Node& n, const std::string& what, const std::string& v,
                      const std::vector<std::string>& known) const {
        for (const auto& k : known)
            if (k == v) return;
        fail(n, "unknown " + what + " '" + v + "' (known: " + join(known) + ")");
    }

    void check_pow2(const YAML::Node& n, uint64_t q) const {
        if ((q & (q - 1)) != 0) fail(n, "queue must be a power of two, got " + std::to_string(q));
    }

private:
    const StageInfo* stage(const YAML::Node& n, const std::string& name) const {
        const StageInfo* info = StageRegistry::instance().find(name);
        if (info == nullptr) {
            std::vector<std::string> names;
            for (const auto* s : StageRegistry::instance().all()) names.push_back(s->name);
            fail(n, "unknown stage '" + name + "' (known: " + join(names) + ")");
        }
        return info;
    }

    static std::string param_names(const StageInfo& s) {
        std::vector<std::string> v{"name", "transport", "queue", "tile"};
        for (const auto& p : s.params) v.push_back(p.name);
        return join(v);
    }

    std::string file_;
};

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

void check_shape(const AppConfig& app, const Location& where) {
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
            if (!last && kind(n) == StageKind::Sink) throw misplaced(n, "end");
            continue;
        }
        const PatternConfig& f = app.patterns[static_cast<size_t>(el[i].pattern)];
        if (!f.emitter && i > 0 && el[i - 1].pattern >= 0)
            throw LocatedError(f.where, "a farm without emitter must follow a single node, which dispatches to its workers");
        for (size_t n = f.first; n < f.last; ++n) {
            if (kind(n) == StageKind::Source && !(i == 0 && n == f.first)) throw misplaced(n, "start");
            const bool sink_ok = !f.map && last && f.collect == "none" && n + 1 == f.last;
            if (kind(n) == StageKind::Sink && !sink_ok)
                throw LocatedError(app.pipeline[n].where,
                                   f.map ? "a map worker runs processors (its collector hands the task on)"
                                         : "a worker may end with a sink only in the last farm, with collect: none");
        }
    }
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

NodeConfig* AppConfig::find_node(const std::string& n) {
    for (auto& node : pipeline)
        if (node.name == n) return &node;
    return nullptr;
}

void finalize(AppConfig& app) {
    for (auto& n : app.pipeline) {
        ParamValues v;
        v.set_node_location(n.where);
        for (const auto& [key, text_loc] : n.raw) {
            const ParamSpec* spec = n.stage->find_param(key);
            if (spec == nullptr)
                throw LocatedError(text_loc.second, "unknown parameter '" + key + "' for stage '" +
                                                        n.stage->name + "'");
            v.set(*spec, text_loc.first, text_loc.second);
        }
        for (const auto& spec : n.stage->params) v.set_default(spec);
        n.params = std::move(v);
    }
    check_farm_queue_params(app);
}

void check_stage_params(const AppConfig& app) {
    for (const NodeConfig& n : app.pipeline) {
        if (n.stage->check_params) n.stage->check_params(n.params);
        if (n.stage->check_data_room) n.stage->check_data_room(n.params, app.pool.data_room);
    }
}

AppConfig parse_app_config(const std::string& text, const std::string& file) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw LocatedError(at(file, e.mark), e.msg);
    }
    Reader r(file);
    AppConfig app;
    app.file = file;
    app.name = std::filesystem::path(file).stem().string();
    app.topology_where = Location{file, 1, 1};
    if (!root.IsMap()) {
        if (!root.IsDefined() || root.IsNull())
            throw LocatedError(Location{file, 1, 1}, "the file is empty; an app needs a 'pipeline:'");
        r.fail(root, "an app config is a mapping with a 'pipeline:' key");
    }
    YAML::Node pipeline;
    for (auto it = root.begin(); it != root.end(); ++it) {
        const std::string k = r.scalar(it->first, "key");
        const YAML::Node v = it->second;  // a copy: it->second lives in a temporary proxy
        if (k == "bench") {
            const std::string b = r.scalar(v, "bench");
            r.fail(it->first, "this file configures a benchmark, not an app: run it with `tilepipe bench " + b +
                                  " --config " + file + "`");
        }
        if (k == "app") app.name = r.scalar(v, "app");
        else if (k == "transport") {
            app.transport = r.scalar(v, "transport");
            r.check_transport(v, app.transport);
        } else if (k == "queue") {
            app.queue = static_cast<uint32_t>(r.uint(v, "queue", 2, 1u << 20));
            r.check_pow2(v, app.queue);
        } else if (k == "pool") r.pool(v, app.pool);
        else if (k == "runtime") r.runtime(v, app);
        else if (k == "topology") {
            app.topology = r.scalar(v, "topology");
            app.topology_where = at(file, v.Mark());
            r.check_choice(v, "topology", app.topology, Topology::preset_names());
        } else if (k == "placement") {
            app.placement = r.scalar(v, "placement");
            r.check_choice(v, "placement", app.placement, placement_names());
        }
        else if (k == "latency") {
            try {
                app.latency = parse_latency(r.scalar(v, "latency"));
            } catch (const std::invalid_argument& e) {
                r.fail(v, e.what());
            }
        }
        else if (k == "pipeline") pipeline = v;
        else r.fail(it->first, "unknown key '" + k + "' (known: app, topology, placement, transport, queue, pool, runtime, latency, pipeline)");
    }
    if (!pipeline) throw LocatedError(Location{file, 1, 1}, "no 'pipeline:' key: an app needs one");
    if (!pipeline.IsSequence()) r.fail(pipeline, "'pipeline' must be a list of stages");
    for (const auto& n : pipeline) {
        if (n.IsMap() && (n["farm"] || n["map"])) {
            const bool map = static_cast<bool>(n["map"]);
            if (n.size() != 1) r.fail(n, std::string("a ") + (map ? "map" : "farm") + " entry holds only that key");
            r.pattern(n[map ? "map" : "farm"], app, map);
            continue;
        }
        app.elements.push_back(PipelineElement{static_cast<int>(app.pipeline.size()), -1});
        app.pipeline.push_back(r.node(n));
    }
    name_nodes(app);  // first, so shape errors can name farms
    check_shape(app, at(file, pipeline.Mark()));
    finalize(app);
    return app;
}

AppConfig load_app_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw LocatedError(Location{path}, "cannot read app config: " + std::string(std::strerror(errno)));
    std::ostringstream os;
    os << in.rdbuf();
    if (in.bad()) throw LocatedError(Location{path}, "cannot read app config");
    return parse_app_config(os.str(), path);
}

void apply_set(AppConfig& app, const std::string& assignment) {
    const Location where{"--set " + assignment};
    const auto eq = assignment.find('=');
    const auto dot = assignment.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
        throw LocatedError(where, "expected NODE.PARAM=VALUE");
    const std::string node = assignment.substr(0, dot);
    const std::string key = assignment.substr(dot + 1, eq - dot - 1);
    NodeConfig* n = app.find_node(node);
    if (n == nullptr) {
        std::vector<std::string> names;
        for (const auto& x : app.pipeline) names.push_back(x.name);
        throw LocatedError(where, "no node named '" + node + "' (nodes: " + join(names) + ")");
    }
    if (n->stage->find_param(key) == nullptr) {
        std::vector<std::string> names;
        for (const auto& p : n->stage->params) names.push_back(p.name);
        throw LocatedError(where, "stage '" + n->stage->name + "' has no parameter '" + key +
                                      "' (known: " + join(names) + ")");
    }
    n->raw[key] = {assignment.substr(eq + 1), where};
    finalize(app);
}

void replace_source_with_pcap(AppConfig& app, const std::string& file) {
    const StageInfo* pcap = StageRegistry::instance().find("pcap");
    if (pcap == nullptr) throw std::logic_error("the pcap stage is not registered");
    if (!app.elements.empty() && app.elements.front().pattern >= 0)
        throw LocatedError(Location{"--pcap " + file},
                           "the app's farm workers each read a port queue, there is no single source to replace "
                           "(set the port's file instead: --set NODE.file=" + file + ")");
    NodeConfig& src = app.pipeline.front();
    src.stage = pcap;
    src.raw.clear();
    src.raw["file"] = {file, Location{"--pcap " + file}};
    finalize(app);
}

void set_loop(AppConfig& app, uint64_t loops) {
    bool any = false;
    for (auto& n : app.pipeline) {
        if (n.stage->find_param("loop") == nullptr || n.stage->kind != StageKind::Source) continue;
        n.raw["loop"] = {std::to_string(loops), Location{"--loop"}};
        any = true;
    }
    if (!any) throw LocatedError(Location{"--loop"}, "the app has no source that replays (use --pcap FILE)");
    finalize(app);
}

}  // namespace tp

namespace tp {

void set_latency(AppConfig& app, const std::string& text) {
    try {
        app.latency = parse_latency(text);
    } catch (const std::invalid_argument& e) {
        throw LocatedError(Location{"--latency " + text}, e.what());
    }
}

void set_topology(AppConfig& app, const std::string& name) {
    app.topology = name;
    app.topology_where = Location{"--topology " + name};
    for (const auto& k : Topology::preset_names())
        if (k == name) return;
    std::string list;
    for (const auto& k : Topology::preset_names()) list += (list.empty() ? "" : ", ") + k;
    throw LocatedError(app.topology_where, "unknown topology '" + name + "' (known: " + list + ")");
}

}  // namespace tp
