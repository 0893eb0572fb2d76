/// @file
/// Building and running a tilepipe app from C++.
///
/// An AppBuilder holds the same graph an app config (YAML) describes: app-wide settings, stage
/// nodes running any registered stage with its parameters, farms and maps, and the pipeline that
/// connects them. Every value is given as the YAML would hold it (text, checked by the same code
/// that reads the file and `--set`) or through a typed convenience that writes that text:
///
///     tp::AppBuilder app("forward");
///     app.set("queue", 1024);
///     tp::Node src = app.stage("synth", {{"count", "1M"}, {"size", "imix"}});
///     tp::Farm fw = app.farm("fw").workers(4).dispatch("flow_hash").worker({app.stage("pass")});
///     app.pipeline({src, app.stage("parse"), fw, app.stage("drop")});
///     tp::Runtime runtime;
///     tp::Report report = runtime.run(app);
///
/// Nodes are handles: they are made first and connected afterwards, the pipeline being one way to
/// connect them. Nothing is checked until validate() or Runtime::run(), which check the whole app
/// as `tilepipe validate` checks a file and throw AppError naming the place in the program's terms
/// (`pipeline[2] (stage lpm_route): parameter 'routes' ...`, `app 'forward' setting queue: ...`).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tilepipe/error.hpp"

namespace tp {

/// Bad input to an app built in C++ (an unknown stage, a value out of range, a pipeline that does
/// not end with a sink...), or a run that could not start. what() reads "place: message"; a
/// LocatedError whose place is the program's (so one catch serves config files and programs).
class AppError : public LocatedError {
public:
    /// An error at `place` (e.g. "pipeline[1] (farm rtc)", "app 'forward' setting queue").
    AppError(const std::string& place, const std::string& message) : LocatedError(Location{place}, message) {}
    /// Where in the program's app the problem is.
    const std::string& place() const noexcept { return where().file; }
};

/// A setting's or parameter's value, held as the text an app config would hold.
class Value {
public:
    /// Text as written in YAML ("2M", "imix", "10.0.0.0/8=1, 0.0.0.0/0=0").
    Value(const char* text) : text_(text) {}
    /// Text as written in YAML.
    Value(std::string text) : text_(std::move(text)) {}
    /// `true` / `false`.
    Value(bool b) : text_(b ? "true" : "false") {}
    /// A signed integer, in decimal.
    Value(int v) : text_(std::to_string(v)) {}
    /// A signed integer, in decimal.
    Value(long v) : text_(std::to_string(v)) {}
    /// A signed integer, in decimal.
    Value(long long v) : text_(std::to_string(v)) {}
    /// An unsigned integer, in decimal.
    Value(unsigned v) : text_(std::to_string(v)) {}
    /// An unsigned integer, in decimal.
    Value(unsigned long v) : text_(std::to_string(v)) {}
    /// An unsigned integer, in decimal.
    Value(unsigned long long v) : text_(std::to_string(v)) {}
    /// A number, written in the shortest form that reads back to the same double.
    Value(double v);
    /// A list, as the comma-separated text list parameters take (`{"aa:bb:...", "cc:dd:..."}`).
    Value(std::initializer_list<Value> items);
    /// A list, as the comma-separated text list parameters take.
    Value(const std::vector<Value>& items);
    /// The text.
    const std::string& text() const noexcept { return text_; }

private:
    std::string text_;
};

/// One key and its value, for the parameter lists of AppBuilder::stage.
using Setting = std::pair<std::string, Value>;

/// The builder's state, internal (pimpl): handles point into it.
struct AppBuilderState;
class Element;

/// A stage node of an AppBuilder (a handle: copies refer to the same node). Made by
/// AppBuilder::stage; used once, in the pipeline or in one farm's or map's worker.
class Node {
public:
    /// Any key a pipeline entry takes: a parameter of its stage, or `name`, `transport`, `queue`,
    /// `tile` ("[x, y]"), `memory` (local, interleave, first_touch); the value as YAML would hold it.
    Node& set(const std::string& key, const Value& value);
    /// The node's name (default: the stage's name, then NAME_2, NAME_3...).
    Node& name(const std::string& name) { return set("name", name); }
    /// Transport of the link into this node (ring, sm, lock, ...; default: the app's).
    Node& transport(const std::string& transport) { return set("transport", transport); }
    /// Capacity of the link into this node, in descriptors (a power of two).
    Node& queue(uint32_t descriptors) { return set("queue", descriptors); }
    /// The tile this node runs on (default: the placement's choice).
    Node& tile(int x, int y);
    /// Where its pool, input buffers and stage state live: local, interleave or first_touch
    /// (default: its farm's or the app's).
    Node& memory(const std::string& policy) { return set("memory", policy); }
    /// Wires output `output` of this node's stage (`out`; a classifier's match names and
    /// `default`; `port3` of a per-port router; `out1` of a tee) to `to`, a node, farm or map of
    /// the pipeline, as YAML's `next: {OUTPUT: NODE}` does. Several outputs may name one node (a
    /// join); one output feeds one edge (copies: a `tee` node). A node given out() is wired by
    /// it alone: every output needs one, as `next:` does. Checked when the app is validated or
    /// run, with the YAML's errors at the program's place.
    Node& out(const std::string& output, const Element& to);
    /// The registered stage it runs.
    const std::string& stage() const;

private:
    friend class AppBuilder;
    friend class Element;
    friend struct AppBuilderState;
    Node(AppBuilderState* state, size_t id) : state_(state), id_(id) {}
    AppBuilderState* state_;
    size_t id_;
};

/// A farm of an AppBuilder: an emitter dispatches to `workers` workers, each running the worker
/// chain, and a collector gathers what they pass on (a handle; made by AppBuilder::farm).
class Farm {
public:
    /// Any key a `farm:` entry takes (name, workers, dispatch, collect, emitter, transport,
    /// queue, memory); the value as YAML would hold it.
    Farm& set(const std::string& key, const Value& value);
    /// How many workers (1-1024).
    Farm& workers(uint32_t n) { return set("workers", n); }
    /// round_robin, on_demand (the first worker with room) or flow_hash (one flow, one worker).
    Farm& dispatch(const std::string& how) { return set("dispatch", how); }
    /// unordered, ordered (the input order restored) or none (the workers end in sinks).
    Farm& collect(const std::string& how) { return set("collect", how); }
    /// false: no emitter (the node before dispatches, or each worker's source reads its own
    /// queue when the farm opens the pipeline).
    Farm& emitter(bool on) { return set("emitter", on); }
    /// Transport of the links inside the farm (default: the app's).
    Farm& transport(const std::string& transport) { return set("transport", transport); }
    /// Capacity of the links inside the farm, in descriptors (a power of two).
    Farm& queue(uint32_t descriptors) { return set("queue", descriptors); }
    /// Memory placement of its emitter, workers and collector: local, interleave or first_touch.
    Farm& memory(const std::string& policy) { return set("memory", policy); }
    /// The chain every worker runs on each packet, on one tile per worker (`worker: [...]`).
    Farm& worker(std::vector<Node> chain);
    /// The stages every worker runs, each on its own tile (`worker: {pipeline: [...]}`).
    Farm& worker_pipeline(std::vector<Node> stages);
    /// Wires the farm's one output (`out`) to `to`, a node, farm or map of the pipeline, as
    /// `next:` on a `farm:` does (default: the next element of the pipeline).
    Farm& out(const Element& to);

private:
    friend class AppBuilder;
    friend class Element;
    Farm(AppBuilderState* state, size_t id) : state_(state), id_(id) {}
    AppBuilderState* state_;
    size_t id_;
};

/// A map of an AppBuilder: the emitter multicasts each burst to every worker, each runs the
/// worker chain on its share, and the collector completes the burst when all have (a handle;
/// made by AppBuilder::map).
class Map {
public:
    /// Any key a `map:` entry takes (name, workers, multicast, transport, queue, memory).
    Map& set(const std::string& key, const Value& value);
    /// How many workers (1-64).
    Map& workers(uint32_t n) { return set("workers", n); }
    /// linear or tree (down a binary tree).
    Map& multicast(const std::string& how) { return set("multicast", how); }
    /// Transport of the links inside the map (default: the app's).
    Map& transport(const std::string& transport) { return set("transport", transport); }
    /// Capacity of the links inside the map, in descriptors (a power of two).
    Map& queue(uint32_t descriptors) { return set("queue", descriptors); }
    /// Memory placement of its emitter, workers and collector: local, interleave or first_touch.
    Map& memory(const std::string& policy) { return set("memory", policy); }
    /// The chain every worker runs on its share of each burst.
    Map& worker(std::vector<Node> chain);
    /// Wires the map's one output (`out`) to `to`, as `next:` on a `map:` does.
    Map& out(const Element& to);

private:
    friend class AppBuilder;
    friend class Element;
    Map(AppBuilderState* state, size_t id) : state_(state), id_(id) {}
    AppBuilderState* state_;
    size_t id_;
};

/// One step of a pipeline: a stage node, a farm or a map.
class Element {
public:
    /// A stage node.
    Element(const Node& n) : state_(n.state_), kind_(Kind::Node), id_(n.id_) {}
    /// A farm.
    Element(const Farm& f) : state_(f.state_), kind_(Kind::Farm), id_(f.id_) {}
    /// A map.
    Element(const Map& m) : state_(m.state_), kind_(Kind::Map), id_(m.id_) {}

private:
    friend class AppBuilder;
    friend struct AppBuilderState;
    enum class Kind { Node, Farm, Map };
    AppBuilderState* state_;
    Kind kind_;
    size_t id_;
};

/// What one stage instance did (a farm's stages once per worker, named as the report names
/// them: `rtc.0/pass`).
struct NodeCounts {
    std::string name;        ///< the report's name for it
    std::string stage;       ///< the stage it runs
    std::string kind;        ///< source, processor or sink
    uint64_t in = 0;         ///< packets it took
    uint64_t out = 0;        ///< packets it passed on (a sink: delivered)
    uint64_t drops = 0;      ///< packets it dropped, counted
    uint64_t delivered = 0;  ///< a sink's `out`; 0 for any other stage
    uint64_t bytes = 0;      ///< frame bytes of `out`
};

/// The report of a run: what `tilepipe run` prints, and the counts a program reads.
struct Report {
    std::string app;                ///< the app's name
    std::string text;               ///< the table `tilepipe run` prints
    std::string json;               ///< the JSON `tilepipe run --json` writes
    int exit_status = 0;            ///< what `tilepipe run` would exit with (0: all accounted)
    uint64_t packets = 0;           ///< emitted by the sources
    uint64_t delivered = 0;         ///< taken by the sinks
    uint64_t drops = 0;             ///< dropped by the stages, counted
    int64_t unaccounted = 0;        ///< packets - delivered - drops (0 in a correct run)
    bool pools_full = true;         ///< every mbuf back in its pool at the end
    double seconds = 0;             ///< the timed window
    double mpps = 0;                ///< delivered per second over it, in millions
    std::vector<NodeCounts> nodes;  ///< per stage instance, in the report's order
    /// The counts of the node named `name` (nullptr when there is none).
    const NodeCounts* node(const std::string& name) const;
};

/// An app composed in C++ (see the file's comment). Movable; the handles it made stay valid.
class AppBuilder {
public:
    /// An empty app named `name` (the report's name).
    explicit AppBuilder(const std::string& name = "app");
    /// Releases the app and its handles.
    ~AppBuilder();
    /// Moves the app; handles made by `other` now refer to this one.
    AppBuilder(AppBuilder&& other) noexcept;
    /// Moves the app; handles made by `other` now refer to this one. The app this one held is
    /// released: handles it made must not be used afterwards.
    AppBuilder& operator=(AppBuilder&& other) noexcept;
    /// Not copyable: handles refer to one app.
    AppBuilder(const AppBuilder&) = delete;
    /// Not copyable: handles refer to one app.
    AppBuilder& operator=(const AppBuilder&) = delete;

    /// An app-wide key as YAML holds it: `app`, `transport`, `queue`, `topology`, `placement`,
    /// `latency`, `memory`, or one key of a group: `pool.mbufs`, `runtime.threads`, `network.queues`,
    /// `chaos.stall`...
    AppBuilder& set(const std::string& key, const Value& value);
    /// Default transport of every link (ring, sm, lock, ...).
    AppBuilder& transport(const std::string& transport) { return set("transport", transport); }
    /// Default link capacity in descriptors (a power of two).
    AppBuilder& queue(uint32_t descriptors) { return set("queue", descriptors); }
    /// The packet pool: `mbufs` (0: sized from the graph), per-core cache, data room per mbuf.
    AppBuilder& pool(uint32_t mbufs, uint32_t cache = 256, uint32_t data_room = 2048);
    /// runtime.threads (auto | per_tile), runtime.fuse (auto | always | never), runtime.idle
    /// (auto | spin | park).
    AppBuilder& runtime(const std::string& threads, const std::string& fuse = "auto", const std::string& idle = "auto");
    /// What the sinks measure: off, all or "sample N".
    AppBuilder& latency(const std::string& how) { return set("latency", how); }
    /// Where pools, channel buffers and stage state live: local, interleave or first_touch.
    AppBuilder& memory(const std::string& policy) { return set("memory", policy); }
    /// A topology preset: host, tilepro64, epiphany16, epiphany64.
    AppBuilder& topology(const std::string& preset) { return set("topology", preset); }
    /// How nodes map onto tiles: linear, snake or compact.
    AppBuilder& placement(const std::string& how) { return set("placement", how); }

    /// Loads the stages of the plugin library at `path` (as the `plugins:` key does; a relative
    /// path is relative to the working directory) when the app is validated or run, before its
    /// stages are looked up. Plugins in the default folders ($TILEPIPE_PLUGIN_PATH,
    /// <libdir>/tilepipe/plugins) load then too, as for `tilepipe run`.
    AppBuilder& plugin(const std::string& path);

    /// A new node running the registered stage `stage`, with `params` (any key Node::set takes).
    Node stage(const std::string& stage, std::initializer_list<Setting> params = {});
    /// A new farm, named `name` (default: farm, farm_2, ...).
    Farm farm(const std::string& name = "");
    /// A new map, named `name` (default: map, map_2, ...).
    Map map(const std::string& name = "");
    /// Connects the elements in order, the first a source and the last a sink (or ending in
    /// sinks); replaces a pipeline given before.
    AppBuilder& pipeline(std::vector<Element> elements);

    /// Checks the app as `tilepipe validate` checks a file (same checks, same messages, the
    /// place in the program's terms); returns the nodes in order ("synth -> parse -> drop").
    /// Throws AppError.
    std::string validate() const;
    /// The app's name.
    const std::string& name() const;

private:
    friend class Runtime;
    friend class PacketAccelerator;
    std::unique_ptr<AppBuilderState> state_;
};

/// What a Runtime starts DPDK's EAL with.
struct RuntimeOptions {
    /// Extra EAL arguments, passed through as `tilepipe run --eal` does (e.g. "--vdev net_null0").
    std::string eal_args;
    /// EAL memory without hugepages, in MiB; 0: sized from the first app run, as `tilepipe run`
    /// sizes it.
    uint64_t memory_mb = 0;
};

/// How one run reports back.
struct RunSettings {
    /// Called with the progress line `tilepipe run` prints, about once a second after the first
    /// two seconds (empty: silent).
    std::function<void(const std::string&)> progress;
    /// The report header's `config` field (the CLI puts the config file's path there).
    std::string config;
    /// true: Ctrl-C and SIGTERM end the run as they end `tilepipe run` (the first stops the
    /// sources and lets what is in flight drain, a second cuts the drain short, a third ends
    /// the process). The handlers stay installed after the run.
    bool handle_signals = false;
};

/// The process's tilepipe runtime: DPDK's EAL, which a process can start only once. Make one
/// Runtime per process (a second while one exists throws AppError) and run apps through it, one
/// after another; EAL starts at the first run, sized for that app (or as RuntimeOptions says),
/// and stays up until the process exits, since DPDK cannot start it again.
class Runtime {
public:
    /// Claims the process's runtime; EAL starts at the first run.
    explicit Runtime(RuntimeOptions options = {});
    /// Gives the claim back; EAL stays up (see the class comment).
    ~Runtime();
    /// Not copyable: one per process.
    Runtime(const Runtime&) = delete;
    /// Not copyable: one per process.
    Runtime& operator=(const Runtime&) = delete;

    /// Validates `app`, starts EAL if it is not up, runs the app to the end of its sources and
    /// returns its report (a run that loses packets reports it in exit_status, it does not
    /// throw). Throws AppError for bad input or a run that could not start.
    Report run(const AppBuilder& app, const RunSettings& settings = {});
    /// Ends the app running now (or the next one, when none runs) as its sources' end would:
    /// they stop emitting, what is in flight drains to the sinks, and run() returns the
    /// report. For an endless source (`count: 0`, `loop: 0`). Callable from any thread and from
    /// a signal handler; once run() returns, the request is forgotten.
    static void stop() noexcept;

private:
    friend class PacketAccelerator;
    RuntimeOptions options_;
};

}  // namespace tp
