#include "framework/config/app_config.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/config/join.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/config/app_wiring.hpp"
#include "framework/config/link_settings.hpp"
#include "framework/config/plugins_key.hpp"
#include "framework/config/yaml_location.hpp"
#include "framework/topology/placement.hpp"

namespace tp {

namespace {

constexpr const char* kAppKeys = "app, topology, placement, transport, queue, pool, runtime, latency, network, chaos, memory, plugins, pipeline";

// The highest `rank:` a config may name (mpirun refuses what the host cannot start anyway).
constexpr uint64_t kMaxRank = 1023;

Location at(const std::string& file, const YAML::Mark& m) { return yaml_location(file, m); }

bool valid_name(const std::string& n) {
    if (n.empty()) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}
    // Reads one value given outside the file (a command-line override): every error is at `where`.
    explicit Reader(const Location& where) : fixed_(where) {}

    Location loc(const YAML::Node& n) const { return fixed_ ? *fixed_ : at(file_, n.Mark()); }

    [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const {
        throw LocatedError(loc(n), msg);
    }

    std::string scalar(const YAML::Node& n, const std::string& what) const {
        if (!n.IsScalar()) fail(n, what + " must be a single value");
        return n.Scalar();
    }

    uint64_t uint(const YAML::Node& n, const std::string& what, uint64_t lo, uint64_t hi) const {
        const std::string s = scalar(n, what);
        ParamSpec spec{what, ParamType::Uint};
        ParamValues v;
        v.set(spec, s, loc(n));
        const uint64_t x = v.get_uint(what);
        if (x < lo || x > hi)
            fail(n, what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                        ", got " + s);
        return x;
    }

    void pool(const YAML::Node& n, PoolConfig& p) const {
        if (!n.IsMap()) fail(n, "pool must be a mapping (mbufs, cache, data_room)");
        for (auto it = n.begin(); it != n.end(); ++it) pool_key(p, it->first, scalar(it->first, "key"), it->second);
    }

    void pool_key(PoolConfig& p, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        if (k == "mbufs") p.mbufs = static_cast<uint32_t>(uint(v, "pool.mbufs", 64, 1u << 26)), p.mbufs_where = loc(v);
        else if (k == "cache") p.cache = static_cast<uint32_t>(uint(v, "pool.cache", 0, 512));
        else if (k == "data_room") p.data_room = static_cast<uint32_t>(uint(v, "pool.data_room", 128, 65000));
        else fail(key, "unknown key 'pool." + k + "' (known: mbufs, cache, data_room)");
    }

    void chaos(const YAML::Node& n, ChaosConfig& c) const {
        if (!n.IsMap()) fail(n, "chaos must be a mapping (stall, stall_ms, after_packets)");
        for (auto it = n.begin(); it != n.end(); ++it) chaos_key(c, it->first, scalar(it->first, "key"), it->second);
    }

    void chaos_key(ChaosConfig& c, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        if (k == "stall") c.stall = scalar(v, "chaos.stall"), c.where = loc(v);
        else if (k == "stall_ms") c.stall_ms = uint(v, "chaos.stall_ms", 1, 3600000);
        else if (k == "after_packets") c.after_packets = uint(v, "chaos.after_packets", 0, ~0ull);
        else fail(key, "unknown key 'chaos." + k + "' (known: stall, stall_ms, after_packets)");
    }

    void runtime(const YAML::Node& n, AppConfig& app) const {
        if (!n.IsMap()) fail(n, "runtime must be a mapping (threads, fuse, idle, rank_links, prefetch)");
        for (auto it = n.begin(); it != n.end(); ++it) runtime_key(app, it->first, scalar(it->first, "key"), it->second);
    }

    void runtime_key(AppConfig& app, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        if (k == "threads") {
            app.threads = scalar(v, "runtime.threads");
            if (app.threads != "auto" && app.threads != "per_tile")
                fail(v, "runtime.threads must be auto or per_tile, got '" + app.threads + "'");
        } else if (k == "fuse") {
            app.fuse = scalar(v, "runtime.fuse");
            if (app.fuse != "auto" && app.fuse != "always" && app.fuse != "never")
                fail(v, "runtime.fuse must be auto, always or never, got '" + app.fuse + "'");
        } else if (k == "idle") {
            app.idle = scalar(v, "runtime.idle");
            // The modes framework/runtime/idle_mode.hpp maps to a back-off.
            check_choice(v, "runtime.idle", app.idle, {"auto", "spin", "park"});
        } else if (k == "rank_links") {
            app.rank_links = scalar(v, "runtime.rank_links");
            check_choice(v, "runtime.rank_links", app.rank_links, {"auto", "messages"});
        } else if (k == "prefetch") {
            app.prefetch = scalar(v, "runtime.prefetch");
            check_choice(v, "runtime.prefetch", app.prefetch, {"none", "burst"});
        } else {
            fail(key, "unknown key 'runtime." + k + "' (known: threads, fuse, idle, rank_links, prefetch)");
        }
    }

    void network(const YAML::Node& key, const YAML::Node& n, NetworkSettings& s) const {
        if (!n.IsMap()) fail(n, "network must be a mapping (queues, queue_words, credits, catch_all)");
        s.where = loc(key);
        for (auto it = n.begin(); it != n.end(); ++it) network_key(s, it->first, scalar(it->first, "key"), it->second);
    }

    void network_key(NetworkSettings& s, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        if (fixed_) s.where = *fixed_;  // an override: the setting's place is the command line
        if (k == "queues") {
            s.queues = static_cast<uint32_t>(uint(v, "network.queues", 1, 254));
            s.queues_where = loc(key);
        } else if (k == "queue_words") {
            if (v.IsScalar() && v.Scalar() == "auto") {
                s.queue_words = NetworkSettings::kAutoQueueWords;
            } else {
                s.queue_words = static_cast<uint32_t>(uint(v, "network.queue_words", 2, 1u << 16));
                if ((s.queue_words & (s.queue_words - 1)) != 0)
                    fail(v, "network.queue_words must be auto or a power of two, got " + std::to_string(s.queue_words));
            }
        } else if (k == "credits") {
            s.credits = scalar(v, "network.credits");
            check_choice(v, "network.credits", s.credits, {"fit", "exact"});
        } else if (k == "catch_all") {
            s.catch_all = scalar(v, "network.catch_all");
            check_choice(v, "network.catch_all", s.catch_all, {"strays", "shared"});
        } else {
            fail(key, "unknown key 'network." + k + "' (known: queues, queue_words, credits, catch_all)");
        }
    }

    // A top-level key other than `pipeline`.
    void app_key(AppConfig& app, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        if (k == "app") app.name = scalar(v, "app");
        else if (k == "transport") {
            app.transport = scalar(v, "transport");
            check_transport(v, app.transport);
        } else if (k == "queue") {
            app.queue = static_cast<uint32_t>(uint(v, "queue", 2, 1u << 20));
            check_pow2(v, app.queue);
        } else if (k == "pool") pool(v, app.pool);
        else if (k == "chaos") chaos(v, app.chaos);
        else if (k == "runtime") runtime(v, app);
        else if (k == "network") network(key, v, app.network);
        else if (k == "topology") {
            app.topology = scalar(v, "topology");
            app.topology_where = loc(v);
            check_choice(v, "topology", app.topology, Topology::preset_names());
        } else if (k == "placement") {
            app.placement = scalar(v, "placement");
            check_choice(v, "placement", app.placement, placement_names());
        } else if (k == "memory") app.memory = read_memory_setting(scalar(v, "memory"), loc(v));
        else if (k == "latency") {
            try {
                app.latency = parse_latency(scalar(v, "latency"));
            } catch (const std::invalid_argument& e) {
                fail(v, e.what());
            }
        } else fail(key, "unknown key '" + k + "' (known: " + std::string(kAppKeys) + ")");
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
            if (k == "stage") continue;
            if (k == "name") {
                set_node_name(nc, scalar(it->second, "name"), loc(it->second));
                continue;
            }
            if (k == "next") {
                nc.next = read_next(it->second, file_);
                nc.has_next = true;
                nc.next_where = loc(it->first);
                continue;
            }
            node_key(nc, it->first, k, it->second);
        }
        return nc;
    }

    // A node's key other than `stage` and `name`.
    void node_key(NodeConfig& nc, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        if (k == "transport") {
            nc.transport = scalar(v, "transport");
            nc.transport_where = loc(v);
            check_transport(v, nc.transport);
        } else if (k == "queue") {
            nc.queue = static_cast<uint32_t>(uint(v, "queue", 2, 1u << 20));
            nc.queue_where = loc(v);
            check_pow2(v, nc.queue);
        } else if (k == "tile") {
            nc.tile = tile(v);
            nc.tile_where = loc(v);
        } else if (k == "memory") {
            nc.memory = read_memory_setting(scalar(v, "memory"), loc(v));
        } else if (k == "rank") {
            nc.rank = static_cast<int>(uint(v, "rank", 0, kMaxRank));
            nc.rank_where = loc(v);
        } else if (k == "next") {
            fail(key, "a node's next cannot be overridden: edit the file");
        } else {
            if (nc.stage->find_param(k) == nullptr)
                fail(key, "unknown parameter '" + k + "' for stage '" + nc.stage->name + "' (known: " + param_names(*nc.stage) + ")");
            if (!v.IsScalar() || v.Tag() == "tag:yaml.org,2002:null") fail(v, "parameter '" + k + "' must be a single value");
            nc.raw[k] = {v.Scalar(), loc(v)};
        }
    }

    // A farm's or map's key other than `worker`.
    void pattern_key(PatternConfig& f, const YAML::Node& key, const std::string& k, const YAML::Node& v) const {
        const bool map = f.map;
        const std::string kind = map ? "map" : "farm";
        if (k == "name") {
            f.name = scalar(v, "name");
            if (!valid_name(f.name)) fail(v, kind + " name '" + f.name + "' may use only letters, digits, '_' and '-'");
            if (f.name == "pool" || f.name == "runtime" || f.name == "chaos")
                fail(v, kind + " name '" + f.name + "' is taken by the app's " + f.name + " settings");
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
        } else if (k == "memory") f.memory = read_memory_setting(scalar(v, "memory"), loc(v));
        else if (k == "rank") {
            f.rank = static_cast<int>(uint(v, "rank", 0, kMaxRank));
            f.rank_where = loc(v);
        } else if (k == "ranks" && !map) {
            if (!v.IsSequence() || v.size() == 0) fail(v, "ranks must be a list of ranks, e.g. [1, 2]");
            f.ranks.clear();
            for (const auto& r : v) f.ranks.push_back(static_cast<int>(uint(r, "rank", 0, kMaxRank)));
            f.ranks_where = loc(v);
        } else fail(key, "unknown " + kind + " key '" + k + "' (known: " + pattern_keys(map) + ")");
    }

    static std::string pattern_keys(bool map) {
        return map ? "name, workers, multicast, transport, queue, memory, rank, next, worker"
                   : "name, workers, dispatch, collect, emitter, transport, queue, memory, rank, ranks, next, worker";
    }

    // `- farm: {...}` or `- map: {...}`: its worker stages are appended to app.pipeline in place.
    void pattern(const YAML::Node& n, AppConfig& app, bool map) const {
        const std::string kind = map ? "map" : "farm";
        if (!n.IsMap()) fail(n, kind + " must be a mapping (" + pattern_keys(map) + ")");
        PatternConfig f;
        f.map = map;
        f.where = loc(n);
        YAML::Node worker;
        bool has_worker = false;
        for (auto it = n.begin(); it != n.end(); ++it) {
            const std::string k = scalar(it->first, "key");
            if (k == "worker") {
                worker = it->second;
                has_worker = true;
            } else if (k == "next") {
                f.next = read_next(it->second, file_);
                f.has_next = true;
                f.next_where = loc(it->first);
            } else {
                pattern_key(f, it->first, k, it->second);
            }
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
        std::vector<NodeConfig> stages;
        for (const auto& s : chain) {
            if (s.IsMap() && (s["farm"] || s["map"])) fail(s, "patterns do not nest; a farm worker may run a pipeline of stages");
            stages.push_back(node(s));
            if (stages.back().has_next)
                fail(s["next"], "next: inside a " + kind + "'s worker chain: each worker runs its chain in order; put "
                                "next: on the " + kind + " to branch after it");
        }
        add_pipeline_pattern(app, std::move(f), std::move(stages));
    }

    TileXY tile(const YAML::Node& v) const {
        if (!v.IsSequence() || v.size() != 2) fail(v, "tile must be a pair [x, y]");
        return TileXY{static_cast<int>(uint(v[0], "tile x", 0, 1023)), static_cast<int>(uint(v[1], "tile y", 0, 1023))};
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
    const StageInfo* stage(const YAML::Node& n, const std::string& name) const { return find_stage(name, loc(n)); }

    static std::string param_names(const StageInfo& s) {
        std::vector<std::string> v = node_keys();
        for (const auto& p : s.params) v.push_back(p.name);
        return join(v);
    }

    std::string file_;
    std::optional<Location> fixed_;
};

}  // namespace

NodeConfig* AppConfig::find_node(const std::string& n) {
    for (auto& node : pipeline)
        if (node.name == n) return &node;
    return nullptr;
}

const ParamValues& NodeConfig::params_of(uint32_t worker) const {
    const auto it = worker_params.find(worker);
    return it != worker_params.end() ? it->second : params;
}

namespace {
// The value of an override as the file would hold it: a tile is a YAML pair `[x, y]`, every
// other value the text as given (so `expr=tcp[13] & 2 != 0` stays one string).
YAML::Node value_node(const std::string& key, const std::string& value, const Location& where) {
    if (key != "tile" && key != "ranks") return YAML::Node(value);
    try {
        return YAML::Load(value);
    } catch (const YAML::Exception& e) {
        throw LocatedError(where, key + (key == "tile" ? " must be a pair [x, y]: " : " must be a list of ranks: ") + e.msg);
    }
}
}  // namespace

void set_app_setting(AppConfig& app, const std::string& key, const std::string& value, const Location& where) {
    const Reader r(where);
    const YAML::Node k(key);
    const auto dot = key.find('.');
    if (dot != std::string::npos && key.compare(0, dot, "chaos") == 0) {
        const std::string sub = key.substr(dot + 1);
        r.chaos_key(app.chaos, k, sub, value_node(sub, value, where));
        return;
    }
    if (dot != std::string::npos && key.compare(0, dot, "network") == 0) {
        const std::string sub = key.substr(dot + 1);
        r.network_key(app.network, k, sub, value_node(sub, value, where));
        return;
    }
    if (dot != std::string::npos && (key.compare(0, dot, "pool") == 0 || key.compare(0, dot, "runtime") == 0)) {
        const std::string sub = key.substr(dot + 1);
        if (key[0] == 'p') r.pool_key(app.pool, k, sub, value_node(sub, value, where));
        else r.runtime_key(app, k, sub, value_node(sub, value, where));
        return;
    }
    if (key == "network")
        throw LocatedError(where, "'network' is not one value: set network.queues, network.queue_words, "
                                  "network.credits or network.catch_all");
    if (key == "plugins")
        throw LocatedError(where, "'plugins' is not one value: name each library with --plugin FILE (or list them in the file)");
    if (key == "pipeline" || key == "pool" || key == "runtime" || key == "chaos")
        throw LocatedError(where, "'" + key + "' is not one value: " +
                                      (key == "pipeline" ? std::string("edit the file")
                                                         : "set " + key + (key == "pool"    ? ".mbufs, pool.cache or pool.data_room"
                                                                           : key == "chaos" ? ".stall, chaos.stall_ms or chaos.after_packets"
                                                                                            : ".threads, runtime.fuse, runtime.idle, runtime.rank_links or runtime.prefetch")));
    r.app_key(app, k, key, value_node(key, value, where));
}

void set_pattern_setting(PatternConfig& f, const std::string& key, const std::string& value, const Location& where) {
    if (key == "name" || key == "worker")
        throw LocatedError(where, "a " + std::string(f.map ? "map" : "farm") + "'s " + key +
                                      " cannot be overridden: edit the file");
    set_pattern_key(f, key, value, where);
}

void set_node_setting(NodeConfig& n, const std::string& key, const std::string& value, const Location& where) {
    if (key == "name" || key == "stage")
        throw LocatedError(where, "a node's " + key + " cannot be overridden: edit the file" +
                                      (key == "stage" ? " (--pcap FILE replaces the source)" : ""));
    Reader(where).node_key(n, YAML::Node(key), key, value_node(key, value, where));
}

TileXY read_tile(const std::string& value, const Location& where) {
    return Reader(where).tile(value_node("tile", value, where));
}

void set_pattern_key(PatternConfig& f, const std::string& key, const std::string& value, const Location& where) {
    Reader(where).pattern_key(f, YAML::Node(key), key, value_node(key, value, where));
}

const StageInfo* find_stage(const std::string& name, const Location& where) {
    const StageInfo* info = StageRegistry::instance().find(name);
    if (info == nullptr) {
        std::vector<std::string> names;
        for (const auto* s : StageRegistry::instance().all()) names.push_back(s->name);
        throw LocatedError(where, "unknown stage '" + name + "' (known: " + join(names) + ")");
    }
    return info;
}

void set_node_name(NodeConfig& n, const std::string& name, const Location& where) {
    if (!valid_name(name)) throw LocatedError(where, "node name '" + name + "' may use only letters, digits, '_' and '-'");
    if (name == "pool" || name == "runtime" || name == "chaos")
        throw LocatedError(where, "node name '" + name + "' is taken by the app's " + name + " settings");
    n.name = name;
}

void add_pipeline_node(AppConfig& app, NodeConfig n) {
    app.elements.push_back(PipelineElement{static_cast<int>(app.pipeline.size()), -1});
    app.pipeline.push_back(std::move(n));
}

void add_pipeline_pattern(AppConfig& app, PatternConfig f, std::vector<NodeConfig> worker) {
    const std::string kind = f.map ? "map" : "farm";
    if (worker.empty()) throw LocatedError(f.where, "a " + kind + " worker needs at least one stage");
    f.first = app.pipeline.size();
    for (NodeConfig& n : worker) {
        n.pattern = static_cast<int>(app.patterns.size());
        app.pipeline.push_back(std::move(n));
    }
    f.last = app.pipeline.size();
    app.elements.push_back(PipelineElement{-1, static_cast<int>(app.patterns.size())});
    app.patterns.push_back(std::move(f));
}

std::string describe_app(const AppConfig& app) {
    const auto node = [&](size_t i) {
        const NodeConfig& n = app.pipeline[i];
        return n.name == n.stage->name ? n.name : n.name + "(" + n.stage->name + ")";
    };
    // A node with next: shows where each output goes: cls(classify){web: ws, default: drop}.
    const auto wiring = [&](const std::vector<NextEdge>& next) {
        std::string w;
        for (const NextEdge& e : next)
            w += (w.empty() ? "{" : ", ") + (e.output.empty() ? "" : e.output + ": ") +
                 (e.to_element >= 0 ? element_name(app, static_cast<size_t>(e.to_element)) : e.to);
        return w.empty() ? w : w + "}";
    };
    std::string s;
    for (const PipelineElement& e : app.elements) {
        if (!s.empty()) s += " -> ";
        if (e.node >= 0) {
            s += node(static_cast<size_t>(e.node)) + wiring(app.pipeline[static_cast<size_t>(e.node)].next);
            continue;
        }
        // A farm or map shows its workers and the chain each runs: fw=farm(4){acl -> flow_table}.
        const PatternConfig& f = app.patterns[static_cast<size_t>(e.pattern)];
        const std::string kind = f.map ? "map" : "farm";
        s += (f.name.rfind(kind, 0) == 0 ? "" : f.name + "=") + kind + "(" + std::to_string(f.workers) + "){" +
             (f.worker_pipeline ? "pipeline: " : "");
        for (size_t i = f.first; i < f.last; ++i) s += (i == f.first ? "" : " -> ") + node(i);
        s += "}" + wiring(f.next);
    }
    return s;
}

AppConfig parse_app_config(const std::string& text, const std::string& file) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw LocatedError(at(file, e.mark), e.msg);
    }
    refuse_repeated_keys(root, file, "next");
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
    // A `tilepipe run --json` report given by mistake: say what it is and which config it ran.
    if (const YAML::Node& c = root; c["header"] && c["packets"] && c["stages"] && !c["pipeline"]) {
        const YAML::Node header = c["header"];
        const std::string ran = header.IsMap() && header["config"] && header["config"].IsScalar() ? header["config"].Scalar() : "";
        throw LocatedError(Location{file}, "is a run report (tilepipe run --json), not an app config" +
                                               (ran.empty() ? std::string() : ": the run was of " + ran));
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
        if (k == "pipeline") pipeline = v;
        else if (k == "plugins") load_config_plugins(v, file);  // before the pipeline's stages are looked up
        else r.app_key(app, it->first, k, v);
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
        add_pipeline_node(app, r.node(n));
    }
    complete_app(app, at(file, pipeline.Mark()));
    return app;
}

AppConfig load_app_config(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw LocatedError(Location{path}, "is a directory, not an app config (a YAML file such as conf/default.yaml)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw LocatedError(Location{path}, "cannot read app config: " + std::string(std::strerror(errno)));
    std::ostringstream os;
    os << in.rdbuf();
    if (in.bad()) throw LocatedError(Location{path}, "cannot read app config");
    const std::string text = os.str();
    // A capture or another binary file given by mistake: say so instead of a YAML error that
    // quotes its bytes.
    static const std::string kCaptureMagics[] = {"\xd4\xc3\xb2\xa1", "\xa1\xb2\xc3\xd4", "\x4d\x3c\xb2\xa1",
                                                 "\xa1\xb2\x3c\x4d", "\x0a\x0d\x0d\x0a"};
    for (const std::string& m : kCaptureMagics)
        if (text.compare(0, m.size(), m) == 0)
            throw LocatedError(Location{path}, "is a capture, not an app config: replay it with `tilepipe run CONF --pcap " +
                                                   path + "`");
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t')
            throw LocatedError(Location{path}, "is not an app config: it holds binary data, not YAML text");
    return parse_app_config(text, path);
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

}  // namespace tp

