#include "framework/config/overrides.hpp"

#include <cctype>
#include <map>
#include <set>
#include <stdexcept>

#include "framework/config/join.hpp"

namespace tp {

namespace {

bool is_index(const std::string& s) {
    if (s.empty() || s.size() > 6) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

// The setting one override reaches. `id` is the same for two overrides of one setting.
struct Target {
    enum Kind { App, Pattern, Node } kind = App;
    size_t index = 0;                // into AppConfig::patterns or ::pipeline
    std::optional<uint32_t> worker;  // one worker's instance only
    std::string key;
    std::string id;
};

int find_pattern(const AppConfig& app, const std::string& name) {
    for (size_t i = 0; i < app.patterns.size(); ++i)
        if (app.patterns[i].name == name) return static_cast<int>(i);
    return -1;
}

int find_node(const AppConfig& app, const std::string& name) {
    for (size_t i = 0; i < app.pipeline.size(); ++i)
        if (app.pipeline[i].name == name) return static_cast<int>(i);
    return -1;
}

std::string names_of(const AppConfig& app) {
    std::vector<std::string> v;
    for (const auto& n : app.pipeline) v.push_back(n.name);
    for (const auto& f : app.patterns) v.push_back(f.name);
    return join(v);
}

Target node_target(const AppConfig& app, size_t node, std::optional<uint32_t> worker, const std::string& key) {
    Target t{Target::Node, node, worker, key, "node " + app.pipeline[node].name};
    if (worker) t.id += "#" + std::to_string(*worker);
    t.id += "." + key;
    return t;
}

// A stage of farm or map `f`'s worker chain, by its node name.
int worker_stage(const AppConfig& app, size_t f, const std::string& name, const Location& where) {
    const PatternConfig& p = app.patterns[f];
    for (size_t i = p.first; i < p.last; ++i)
        if (app.pipeline[i].name == name) return static_cast<int>(i);
    std::vector<std::string> v;
    for (size_t i = p.first; i < p.last; ++i) v.push_back(app.pipeline[i].name);
    throw LocatedError(where, "the workers of '" + p.name + "' run no stage named '" + name + "' (they run: " + join(v) + ")");
}

// The override that sets `key` (transport or queue) of the links into every worker of
// pattern `f` running stage `n`: the stage's own where it has a link, else its chain's first
// stage's, or the map's.
std::string every_workers_link(const AppConfig& app, size_t f, size_t n, const std::string& key) {
    const PatternConfig& p = app.patterns[f];
    if (p.map) return "--set " + p.name + "." + key;
    const size_t at = p.worker_pipeline ? n : p.first;
    return "--set " + p.name + "." + app.pipeline[at].name + "." + key;
}

Target resolve(const AppConfig& app, const std::string& path, const Location& where) {
    std::vector<std::string> parts;
    size_t from = 0;
    for (size_t i = 0; i <= path.size(); ++i)
        if (i == path.size() || path[i] == '.' || path[i] == '/') {
            parts.push_back(path.substr(from, i - from));
            from = i + 1;
        }
    for (const auto& p : parts)
        if (p.empty()) throw LocatedError(where, "expected PATH=VALUE, PATH such as synth.count, fw.workers or queue");
    const std::string key = parts.back();
    parts.pop_back();
    if (parts.empty()) return Target{Target::App, 0, {}, key, key};
    const std::string& head = parts[0];
    if (parts.size() == 1 && (head == "pool" || head == "runtime" || head == "network" || head == "chaos"))
        return Target{Target::App, 0, {}, head + "." + key, head + "." + key};
    const int pattern = find_pattern(app, head);
    if (parts.size() == 1) {
        if (const int n = find_node(app, head); n >= 0) return node_target(app, static_cast<size_t>(n), {}, key);
        if (pattern >= 0) return Target{Target::Pattern, static_cast<size_t>(pattern), {}, key, "pattern " + head + "." + key};
        throw LocatedError(where, "no node or farm named '" + head + "' (names: " + names_of(app) +
                                      "; top-level settings take no name: --set queue=256, --set pool.mbufs=8191)");
    }
    if (pattern < 0) throw LocatedError(where, "no farm or map named '" + head + "' (names: " + names_of(app) + ")");
    const auto f = static_cast<size_t>(pattern);
    if (parts.size() == 2) {
        if (is_index(parts[1]))
            throw LocatedError(where, "worker " + parts[1] + " of '" + head + "' runs stages: name one, e.g. " + head + "." +
                                          parts[1] + "/" + app.pipeline[app.patterns[f].first].name + "." + key);
        return node_target(app, static_cast<size_t>(worker_stage(app, f, parts[1], where)), {}, key);
    }
    if (parts.size() == 3 && is_index(parts[1])) {
        const auto n = static_cast<size_t>(worker_stage(app, f, parts[2], where));
        const NodeConfig& nc = app.pipeline[n];
        if (nc.stage->find_param(key) == nullptr && key != "memory" && key != "tile") {
            std::vector<std::string> v;
            for (const auto& p : nc.stage->params) v.push_back(p.name);
            throw LocatedError(where, "one worker's instance takes only parameters of its stage '" + nc.stage->name +
                                          "' (known: " + join(v) + "), memory and tile" +
                                          (key == "transport" || key == "queue" ? "; " + key + " is every worker's: " +
                                                                                      every_workers_link(app, f, n, key)
                                                                                : std::string()));
        }
        return node_target(app, n, static_cast<uint32_t>(std::stoul(parts[1])), key);
    }
    throw LocatedError(where, "cannot tell which setting '" + path + "' names (NODE.KEY, FARM.KEY, FARM.NODE.KEY or FARM.W/NODE.KEY)");
}

void apply(AppConfig& app, const Target& t, const std::string& value, const Location& where) {
    switch (t.kind) {
        case Target::App: set_app_setting(app, t.key, value, where); break;
        case Target::Pattern: set_pattern_setting(app.patterns[t.index], t.key, value, where); break;
        case Target::Node:
            if (t.worker && t.key == "memory") app.pipeline[t.index].worker_memory[*t.worker] = read_memory_setting(value, where);
            else if (t.worker && t.key == "tile") app.pipeline[t.index].worker_tile[*t.worker] = {read_tile(value, where), where};
            else if (t.worker) app.pipeline[t.index].worker_raw[*t.worker][t.key] = {value, where};
            else set_node_setting(app.pipeline[t.index], t.key, value, where);
            break;
    }
}

// Remembers which override set what, so a second override of one setting is refused.
class Claims {
public:
    void claim(const std::string& id, const Location& where) {
        const auto [it, fresh] = by_.try_emplace(id, where);
        if (!fresh)
            throw LocatedError(where, "sets what " + it->second.file + " already set; give each setting once");
    }

private:
    std::map<std::string, Location> by_;
};

void set_one(AppConfig& app, const std::string& assignment, Claims* claims) {
    const Location where{"--set " + assignment};
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) throw LocatedError(where, "expected PATH=VALUE (e.g. synth.count=1000, fw.workers=4, queue=256)");
    const Target t = resolve(app, assignment.substr(0, eq), where);
    if (claims != nullptr) claims->claim(t.id, where);
    apply(app, t, assignment.substr(eq + 1), where);
}

size_t source_node(const AppConfig& app, const Location& where) {
    if (!app.elements.empty() && app.elements.front().pattern >= 0) {
        const PatternConfig& f = app.patterns[static_cast<size_t>(app.elements.front().pattern)];
        throw LocatedError(where, "the workers of farm '" + f.name +
                                      "' each read a port queue, so there is no single source to replace: set the "
                                      "port's file instead (--set " + f.name + "." + app.pipeline[f.first].name +
                                      ".file=FILE)");
    }
    return static_cast<size_t>(app.elements.front().node);
}

void pcap_source(AppConfig& app, const std::string& file, Claims* claims) {
    const Location where{"--pcap " + file};
    const StageInfo* pcap = StageRegistry::instance().find("pcap");
    if (pcap == nullptr) throw std::logic_error("the pcap stage is not registered");
    const size_t s = source_node(app, where);
    if (claims != nullptr) claims->claim(node_target(app, s, {}, "file").id, where);
    NodeConfig& src = app.pipeline[s];
    // Settings a pcap source also has (its loop, its pacing) stay; the rest were the old stage's.
    for (auto it = src.raw.begin(); it != src.raw.end();)
        it = it->first == "file" || pcap->find_param(it->first) == nullptr ? src.raw.erase(it) : std::next(it);
    src.stage = pcap;
    src.raw["file"] = {file, where};
}

void loop_sources(AppConfig& app, const std::string& loops, Claims* claims) {
    const Location where{"--loop " + loops};
    bool any = false;
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        NodeConfig& n = app.pipeline[i];
        if (n.stage->find_param("loop") == nullptr || n.stage->kind != StageKind::Source) continue;
        if (claims != nullptr) claims->claim(node_target(app, i, {}, "loop").id, where);
        n.raw["loop"] = {loops, where};
        any = true;
    }
    if (!any) throw LocatedError(where, "the app has no source that replays (use --pcap FILE)");
}

// `--strict`: every source with a `strict` parameter refuses a capture with a damaged record.
void strict_sources(AppConfig& app, Claims* claims) {
    const Location where{"--strict"};
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        NodeConfig& n = app.pipeline[i];
        if (n.stage->find_param("strict") == nullptr || n.stage->kind != StageKind::Source) continue;
        if (claims != nullptr) claims->claim(node_target(app, i, {}, "strict").id, where);
        n.raw["strict"] = {"true", where};
    }
}

// The app's sources, for the errors of the run-wide shortcuts.
std::string sources_of(const AppConfig& app) {
    std::vector<std::string> v;
    for (const NodeConfig& n : app.pipeline)
        if (n.stage->kind == StageKind::Source) v.push_back(n.name + " (" + n.stage->name + ")");
    return join(v);
}

// `--limit N` (tcpreplay's): the app's source stops after N packets; a replay's `limit`, a
// port's `packets`, a generator's `count`.
void limit_source(AppConfig& app, const std::string& packets, Claims* claims) {
    const Location where{"--limit " + packets};
    std::vector<std::pair<size_t, const char*>> limited;
    size_t sources = 0;
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        const NodeConfig& n = app.pipeline[i];
        if (n.stage->kind != StageKind::Source) continue;
        ++sources;
        for (const char* key : {"limit", "packets", "count"})
            if (n.stage->find_param(key) != nullptr) {
                limited.emplace_back(i, key);
                break;
            }
    }
    if (sources > 1)
        throw LocatedError(where, "counts the packets of one source, and this app has several (" + sources_of(app) +
                                      "): set each one's own (--set NODE.limit=N for a pcap source)");
    if (app.elements.front().pattern >= 0 && !limited.empty()) {
        const PatternConfig& f = app.patterns[static_cast<size_t>(app.elements.front().pattern)];
        const NodeConfig& src = app.pipeline[limited.front().first];
        throw LocatedError(where, "counts the packets of one source, and each of the " + std::to_string(f.workers) +
                                      " workers of farm '" + f.name + "' runs its own '" + src.name + "': set theirs (--set " +
                                      f.name + "." + src.name + "." + limited.front().second + "=N, each worker's)");
    }
    if (limited.empty())
        throw LocatedError(where, "the app's source cannot stop after a number of packets (" + sources_of(app) + ")");
    const auto [node, key] = limited.front();
    if (claims != nullptr) claims->claim(node_target(app, node, {}, key).id, where);
    app.pipeline[node].raw[key] = {packets, where};
}

// `--pps R`, `--mbps R`, `--multiplier X` (tcpreplay's): the pace of every source that paces
// that way, replacing its own (a source takes one of pps, mbps, speed).
void pace_sources(AppConfig& app, const char* option, const char* key, const std::string& rate, Claims* claims) {
    const Location where{std::string(option) + " " + rate};
    bool any = false;
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        NodeConfig& n = app.pipeline[i];
        if (n.stage->kind != StageKind::Source || n.stage->find_param(key) == nullptr) continue;
        for (const char* pace : {"pps", "mbps", "speed"}) {
            if (n.stage->find_param(pace) == nullptr) continue;
            if (claims != nullptr) claims->claim(node_target(app, i, {}, pace).id, where);
            n.raw[pace] = {pace == std::string(key) ? rate : "0", where};
        }
        any = true;
    }
    if (!any)
        throw LocatedError(where, std::string("no source of the app paces ") +
                                      (std::string(key) == "speed" ? "by the capture's timestamps (a pcap source does)"
                                                                   : "its packets (pcap and synth sources do)") +
                                      "; its sources: " + sources_of(app));
}

void topology(AppConfig& app, const std::string& name, Claims* claims) {
    const Location where{"--topology " + name};
    if (claims != nullptr) claims->claim("topology", where);
    set_app_setting(app, "topology", name, where);
}

}  // namespace

void apply_overrides(AppConfig& app, const AppOverrides& o) {
    Claims claims;
    if (o.pcap) pcap_source(app, *o.pcap, &claims);
    if (o.loop) loop_sources(app, *o.loop, &claims);
    if (o.strict) strict_sources(app, &claims);
    if (o.limit) limit_source(app, *o.limit, &claims);
    if (o.pps) pace_sources(app, "--pps", "pps", *o.pps, &claims);
    if (o.mbps) pace_sources(app, "--mbps", "mbps", *o.mbps, &claims);
    if (o.multiplier) pace_sources(app, "--multiplier", "speed", *o.multiplier, &claims);
    if (o.topology) topology(app, *o.topology, &claims);
    if (o.latency) {
        const Location where{"--latency " + *o.latency};
        claims.claim("latency", where);
        set_app_setting(app, "latency", *o.latency, where);
    }
    for (const auto& s : o.sets) set_one(app, s, &claims);
    check_app(app);
}

void apply_set(AppConfig& app, const std::string& assignment) {
    set_one(app, assignment, nullptr);
    check_app(app);
}

void replace_source_with_pcap(AppConfig& app, const std::string& file) {
    pcap_source(app, file, nullptr);
    check_app(app);
}

void set_loop(AppConfig& app, const std::string& loops) {
    loop_sources(app, loops, nullptr);
    check_app(app);
}

void set_topology(AppConfig& app, const std::string& name) {
    topology(app, name, nullptr);
    check_app(app);
}

}  // namespace tp
