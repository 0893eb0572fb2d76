// `tilepipe topo CONF`: where an app would run — an ASCII map of the mesh with the node on
// each tile and the CPU that tile runs on, then every channel with its hop count. The map
// fits the output's width (folded into bands of columns) and names are never cut (a name too
// long for its cell is listed in a legend under the map). Then the messaging network of the
// udn links: each tile's queues, the tags and credits they carry, and where the `memory:`
// setting puts each node's memory (its NUMA node and policy, the packet pool's). `--json`
// writes the same plan.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/tilepipe/app_args.hpp"
#include "apps/tilepipe/commands.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/rank_plan.hpp"
#include "framework/graph/memory_plan.hpp"
#include "framework/graph/pool_sizing.hpp"
#include "framework/output/json_out.hpp"

namespace tp::cli {

namespace {

// Characters a tile's column may take: a name longer than fits goes into the legend under the
// map, and its cell shows the legend's key instead, so no name is ever cut.
constexpr size_t kCellMin = 7;
constexpr size_t kCellMax = 18;
constexpr size_t kRowLabel = 6;  // "y=12  "

// The width the map may use: $COLUMNS, else the terminal's, else 80 (a pipe, a file).
size_t output_width() {
    if (const char* c = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long n = std::strtol(c, &end, 10);
        if (end != c && *end == '\0' && n > 0) return static_cast<size_t>(n);
    }
    winsize ws{};
    if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

std::string pad(std::string s, size_t width) {
    if (s.size() < width) s += std::string(width - s.size(), ' ');
    return s;
}

std::string trimmed(std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

// `text` broken at spaces into lines of at most `width` characters (a longer word keeps its
// own line), continuation lines indented by two.
std::string wrapped(const std::string& text, size_t width) {
    std::string out, line;
    size_t at = 0;
    while (at < text.size()) {
        const size_t end = std::min(text.find(' ', at), text.size());
        const std::string word = text.substr(at, end - at);
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = "  ";
        }
        line += (line.empty() || line == "  " ? "" : " ") + word;
        at = end + 1;
    }
    return out + line + "\n";
}

std::string render_networks(const AppPlan& plan, const MemoryPlan& m, size_t width);
std::string render_edges(const AppPlan& plan);
std::string render_memory(const AppConfig& app, const AppPlan& plan, const MemoryPlan& m, size_t width);

std::string render(const AppConfig& app, const AppPlan& plan, const MemoryPlan& memory, size_t width) {
    const Topology& t = plan.topology;
    std::vector<std::string> node_at(static_cast<size_t>(t.tiles()));
    std::vector<int> cpu_at(static_cast<size_t>(t.tiles()), -1);
    const auto& nodes = plan.graph.nodes;
    size_t longest = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto tile = static_cast<size_t>(plan.tile_of_node[i]);
        node_at[tile] = nodes[i].name;
        cpu_at[tile] = plan.threads.cpu_of_thread[plan.threads.thread_of_node[i]];
        longest = std::max(longest, nodes[i].name.size());
    }
    // Wide enough for the longest name when that is reasonable, and for "x=NN", "cpuNN"; narrower
    // (long names in the legend) when that fits every column in the width, which folding cannot.
    const size_t narrowest = std::max(kCellMin, std::to_string(t.width()).size() + 4);
    const size_t ideal = std::clamp(longest + 2, narrowest, kCellMax);
    const size_t fitting = (width > kRowLabel ? width - kRowLabel : 0) / static_cast<size_t>(t.width());
    const size_t cell = fitting >= ideal || fitting < narrowest ? ideal : fitting;
    std::vector<std::string> legend;
    std::vector<std::string> label_at(node_at.size());
    for (size_t tile = 0; tile < node_at.size(); ++tile) {
        if (node_at[tile].size() + 1 <= cell) {
            label_at[tile] = node_at[tile];
        } else {
            label_at[tile] = "[" + std::to_string(legend.size() + 1) + "]";
            legend.push_back(label_at[tile] + " " + node_at[tile]);
        }
    }

    std::string s = wrapped("app " + app.name + " on " + t.name() + " (" + t.summary() + "; " +
                                std::to_string(t.usable()) + " usable tiles), placement " + app.placement + ", " +
                                std::to_string(plan.threads.cpu_of_thread.size()) + " thread(s) on " +
                                std::to_string(plan.cpus) + " CPU(s)",
                            width);
    // A mesh wider than the output is folded: bands of as many columns as fit, one under another.
    const size_t per_band = std::max<size_t>(1, (width > kRowLabel ? width - kRowLabel : 0) / cell);
    for (int x0 = 0; x0 < t.width(); x0 += static_cast<int>(per_band)) {
        const int x1 = std::min(t.width(), x0 + static_cast<int>(per_band));
        if (x0 > 0) s += "\n";
        std::string header(kRowLabel, ' ');
        for (int x = x0; x < x1; ++x) header += pad("x=" + std::to_string(x), cell);
        s += trimmed(header) + "\n";
        for (int y = 0; y < t.height(); ++y) {
            std::string names = pad("y=" + std::to_string(y), kRowLabel), cpus(kRowLabel, ' ');
            for (int x = x0; x < x1; ++x) {
                const int id = t.tile_at({x, y});
                const auto tile = static_cast<size_t>(id);
                if (t.reserved(id)) names += pad("##", cell), cpus += pad("", cell);
                else if (node_at[tile].empty()) names += pad(".", cell), cpus += pad(t.cpu_of(id) >= 0 ? "cpu" + std::to_string(t.cpu_of(id)) : "", cell);
                else names += pad(label_at[tile], cell), cpus += pad("cpu" + std::to_string(cpu_at[tile]), cell);
            }
            s += trimmed(names) + "\n" + trimmed(cpus) + "\n";
        }
    }
    s += "(## reserved, . free)\n";
    for (const std::string& l : legend) s += l + "\n";
    s += "channels:\n";
    size_t from_w = 0, to_w = 0;
    for (const auto& l : plan.links) {
        from_w = std::max(from_w, nodes[l.from].name.size());
        to_w = std::max(to_w, nodes[l.to].name.size());
    }
    for (const auto& l : plan.links) {
        char tail[80];
        std::snprintf(tail, sizeof tail, " %-9s %5u slots  %d hop%s", l.transport.c_str(), l.capacity, l.hops,
                      l.hops == 1 ? "" : "s");
        s += "  " + pad(nodes[l.from].name, from_w) + " -> " + pad(nodes[l.to].name, to_w) + tail + "\n";
    }
    char cost[80];
    std::snprintf(cost, sizeof cost, "total hops %d\n", [&] {
        int h = 0;
        for (const auto& l : plan.links) h += l.hops;
        return h;
    }());
    return s + cost + render_edges(plan) + render_memory(app, plan, memory, width) + render_networks(plan, memory, width);
}

std::string nodes_text(const std::vector<int>& nodes) {
    std::string s;
    for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
    return s;
}

// "packets" when the app has one pool, else "packets.N" (MemoryPlan::pools' order).
std::string pool_name(const MemoryPlan& m, size_t pool) {
    return m.pools.size() == 1 ? "packets" : "packets." + std::to_string(pool);
}

// The sources filling pool `pool`, by node name.
std::vector<std::string> pool_sources(const AppPlan& plan, const MemoryPlan& m, size_t pool) {
    std::vector<std::string> v;
    for (size_t i : m.sources)
        if (m.pool_of_node[i] == pool) v.push_back(plan.graph.nodes[i].name);
    return v;
}

nlohmann::json pools_json(const AppConfig& app, const AppPlan& plan, const MemoryPlan& m) {
    nlohmann::json pools = nlohmann::json::array();
    for (size_t p = 0; p < m.pools.size(); ++p)
        pools.push_back({{"name", pool_name(m, p)},
                         {"memory", memory_policy_name(m.pools[p].policy)},
                         {"memory_nodes", m.pools[p].nodes},
                         {"follows", m.pool_follows[p] >= 0 ? nlohmann::json(plan.graph.nodes[static_cast<size_t>(m.pool_follows[p])].name)
                                                            : nlohmann::json(nullptr)},
                         {"sources", pool_sources(plan, m, p)},
                         {"mbufs", pool_mbufs(app, plan)},
                         {"cache", app.pool.cache},
                         {"data_room", app.pool.data_room}});
    return pools;
}

// Per node: its NUMA node and where its input channels' buffers and its stages' state go.
std::string render_memory(const AppConfig& app, const AppPlan& plan, const MemoryPlan& m, size_t width) {
    const auto& nodes = plan.graph.nodes;
    std::string s = wrapped("memory: " + std::string(memory_policy_name(memory_policy_of(app))) + " app-wide; the app's CPUs are on NUMA node(s) " +
                                nodes_text(m.app_nodes) + (m.bind ? "" : "; nothing is bound (the kernel places each page where it is first written)"),
                            width);
    for (size_t p = 0; p < m.pools.size(); ++p) {
        const std::vector<std::string> sources = pool_sources(plan, m, p);
        s += "  pool " + pool_name(m, p) + ": " + describe(m.pools[p]);
        if (m.pools.size() == 1 && m.pool_follows[p] >= 0)
            s += " (follows " + nodes[static_cast<size_t>(m.pool_follows[p])].name + ", its first source)";
        else if (!sources.empty()) {
            s += " (filled by ";
            for (size_t k = 0; k < sources.size(); ++k) s += (k == 0 ? "" : ", ") + sources[k];
            s += ")";
        }
        s += "\n";
    }
    size_t name_w = 4;
    for (const auto& n : nodes) name_w = std::max(name_w, n.name.size());
    s += "  " + pad("node", name_w) + "  cpu  numa  channels in + stage state\n";
    for (size_t i = 0; i < nodes.size(); ++i) {
        char mid[32];
        std::snprintf(mid, sizeof mid, "  %3d  %4d  ", plan.threads.cpu_of_thread[plan.threads.thread_of_node[i]], m.numa_of_node[i]);
        s += "  " + pad(nodes[i].name, name_w) + mid + describe(m.node[i]) + "\n";
    }
    return s;
}

// Where a network tile's queues are: bound like its node's channels in (shared memory), or
// DPDK's (an event device's queues are its own memory, never bound).
std::string queues_memory(const NetworkPlan& np, const MemoryPlan& m, size_t node) {
    return np.transport == "udn" ? describe(m.node[node]) : "the event device's DPDK memory, not bound";
}

// Each messaging network of the udn links: per tile, the queues in use and what they carry.
std::string render_networks(const AppPlan& plan, const MemoryPlan& m, size_t width) {
    std::string s;
    for (const NetworkPlan& np : plan.networks) {
        const auto& c = np.config;
        const std::string sizes = c.queue_sizes.empty()
                                      ? "of " + std::to_string(c.queue_words) + " words"
                                      : "sized to their credits (" + std::to_string(c.queue_words) + " to " +
                                            std::to_string(c.largest_queue()) + " words)";
        s += wrapped(np.transport + " network: " + std::to_string(c.tiles) + " tiles, " + std::to_string(c.queues) +
                         " demux queues " + sizes + " and a catch-all each",
                     width);
        for (const NetworkTilePlan& t : np.tiles) {
            const TileXY xy = plan.topology.xy(plan.tile_of_node[t.node]);
            s += "  " + plan.graph.nodes[t.node].name + " (" + std::to_string(xy.x) + "," + std::to_string(xy.y) + ")" +
                 (m.bind ? "  queues: " + queues_memory(np, m, t.node) : "") + "\n";
            for (const NetworkQueuePlan& q : t.queues) {
                std::string line = (q.index == c.queues ? std::string("catch-all") : "q" + std::to_string(q.index)) +
                                   (q.shared ? " logical" : "") + " " + std::to_string(q.reserved_words) + "/" +
                                   std::to_string(q.words) + " words:";
                for (size_t i = 0; i < q.carries.size(); ++i) line += (i == 0 ? " " : "; ") + q.carries[i];
                s += "    " + wrapped(line, width > 8 ? width - 4 : width);
            }
        }
        for (const std::string& n : np.notes) s += "  " + wrapped("note: " + n, width > 4 ? width - 2 : width);
    }
    return s;
}

nlohmann::json networks_json(const AppConfig& app, const AppPlan& plan, const MemoryPlan& m) {
    nlohmann::json out = nlohmann::json::array();
    for (const NetworkPlan& np : plan.networks) {
        nlohmann::json tiles = nlohmann::json::array();
        for (const NetworkTilePlan& t : np.tiles) {
            nlohmann::json queues = nlohmann::json::array();
            for (const NetworkQueuePlan& q : t.queues)
                queues.push_back({{"index", q.index}, {"catch_all", q.index == np.config.queues}, {"logical", q.shared},
                                  {"reserved_words", q.reserved_words}, {"words", q.words}, {"carries", q.carries}});
            const TileXY xy = plan.topology.xy(plan.tile_of_node[t.node]);
            const bool shm = np.transport == "udn";
            tiles.push_back({{"node", plan.graph.nodes[t.node].name}, {"tile", {xy.x, xy.y}}, {"queues", queues},
                             {"memory", shm ? nlohmann::json(memory_policy_name(m.node[t.node].policy)) : nlohmann::json(nullptr)},
                             {"memory_nodes", shm ? m.node[t.node].nodes : std::vector<int>{}}});
        }
        nlohmann::json links = nlohmann::json::array();
        for (const NetworkLinkPlan& l : np.links) {
            const NetworkGroupPlan& g = np.groups[l.group];
            const GraphEdge& e = plan.graph.edges[l.edge];
            links.push_back({{"from", plan.graph.nodes[e.from].name}, {"to", plan.graph.nodes[e.to].name},
                             {"data_tag", g.data_tag}, {"data_queue", g.data_queue}, {"ack_tag", g.ack_tag},
                             {"ack_queue", l.ack_queue}, {"asymmetric", g.asymmetric()}, {"credits", g.credits},
                             {"requested", l.requested}});
        }
        out.push_back({{"transport", np.transport}, {"tiles", tiles}, {"links", links}, {"notes", np.notes},
                       {"queues", np.config.queues},
                       {"queue_words", np.config.queue_sizes.empty() ? nlohmann::json(np.config.queue_words) : nlohmann::json("auto")},
                       {"largest_queue_words", np.config.largest_queue()},
                       {"credits", app.network.credits}, {"catch_all", app.network.catch_all}});
    }
    return out;
}

// How a node hands packets to several next nodes: "" when it has one.
const char* dispatch_name(Dispatch d) {
    switch (d) {
        case Dispatch::RoundRobin: return "round_robin";
        case Dispatch::OnDemand: return "on_demand";
        case Dispatch::FlowHash: return "flow_hash";
        case Dispatch::Branch: return "branch";
        default: return "";
    }
}

// The app's edges as wired (`l3.ipv4 -> route`), an app that branches only: a chain's are its channels.
std::string render_edges(const AppPlan& plan) {
    const auto& g = plan.graph;
    const bool branches = std::any_of(g.edges.begin(), g.edges.end(), [](const GraphEdge& e) { return e.output >= 0; });
    if (!branches) return "";
    std::string s = "edges:\n";
    for (const GraphEdge& e : g.edges)
        if (!e.label.empty()) s += "  " + g.nodes[e.from].name + "." + e.label + " -> " + g.nodes[e.to].name + "\n";
    return s;
}

nlohmann::json edges_json(const AppPlan& plan) {
    nlohmann::json out = nlohmann::json::array();
    for (const GraphEdge& e : plan.graph.edges)
        if (!e.label.empty())
            out.push_back({{"from", plan.graph.nodes[e.from].name}, {"output", e.label}, {"to", plan.graph.nodes[e.to].name},
                           {"transport", e.transport}, {"capacity", e.capacity}});
    return out;
}

// Graphviz: every tile a box (its stages under its name), every channel an arrow, an app's
// edge labelled with its output.
std::string as_dot(const AppConfig& app, const AppPlan& plan) {
    const auto& g = plan.graph;
    const auto quoted = [](const std::string& s) {
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\\\"") : std::string(1, c);
        return q + "\"";
    };
    std::string s = "digraph " + quoted(app.name) + " {\n  rankdir=LR;\n  node [shape=box];\n";
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        std::string label = g.nodes[n].name;
        for (size_t st : g.nodes[n].stages)
            if (app.pipeline[st].stage->name != g.nodes[n].name) label += "\n" + app.pipeline[st].stage->name;
        s += "  n" + std::to_string(n) + " [label=" + quoted(label) + "];\n";
    }
    for (const GraphEdge& e : g.edges) {
        if (e.freed) continue;
        s += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to);
        if (!e.label.empty() && e.label != "out") s += " [label=" + quoted(e.label) + "]";
        else if (e.words) s += " [style=dashed]";
        s += ";\n";
    }
    return s + "}\n";
}

nlohmann::json as_json(const AppConfig& app, const AppPlan& plan, const MemoryPlan& memory) {
    const Topology& t = plan.topology;
    nlohmann::json nodes = nlohmann::json::array(), links = nlohmann::json::array(), reserved = nlohmann::json::array();
    const RankLayout ranks = plan_ranks(app, plan.graph);
    for (size_t i = 0; i < plan.graph.nodes.size(); ++i) {
        const TileXY p = t.xy(plan.tile_of_node[i]);
        nlohmann::json stages = nlohmann::json::array();
        for (size_t s : plan.graph.nodes[i].stages) stages.push_back(app.pipeline[s].stage->name);
        nodes.push_back({{"name", plan.graph.nodes[i].name},
                         {"stages", stages},
                         {"tile", {p.x, p.y}},
                         {"thread", plan.threads.thread_of_node[i]},
                         {"cpu", plan.threads.cpu_of_thread[plan.threads.thread_of_node[i]]},
                         {"numa", memory.numa_of_node[i]},
                         {"memory", memory_policy_name(memory.node[i].policy)},
                         {"memory_nodes", memory.node[i].nodes},
                         {"dispatch", dispatch_name(plan.graph.nodes[i].dispatch)},
                         {"ordered", plan.graph.nodes[i].reorder},
                         {"prefetch", prefetches_bursts(app, plan.graph.nodes[i])},
                         {"rank", ranks.rank_of_node[i]}});
    }
    for (const auto& l : plan.links)
        links.push_back({{"from", plan.graph.nodes[l.from].name}, {"to", plan.graph.nodes[l.to].name},
                         {"transport", l.transport}, {"capacity", l.capacity}, {"hops", l.hops}});
    for (int id = 0; id < t.tiles(); ++id)
        if (t.reserved(id)) reserved.push_back({t.xy(id).x, t.xy(id).y});
    return {{"app", app.name}, {"topology", t.name()}, {"width", t.width()}, {"height", t.height()},
            {"usable", t.usable()}, {"reserved", reserved}, {"placement", app.placement},
            {"threads", plan.threads.cpu_of_thread.size()}, {"cpus", plan.cpus}, {"idle", app.idle}, {"rank_links", app.rank_links},
            {"prefetch", app.prefetch},
            {"nodes", nodes}, {"channels", links}, {"edges", edges_json(plan)}, {"networks", networks_json(app, plan, memory)},
            {"memory", memory_policy_name(memory_policy_of(app))}, {"numa_nodes", memory.app_nodes}, {"bound", memory.bind},
            {"pools", pools_json(app, plan, memory)}};
}

}  // namespace

void add_topo(CLI::App& app, Action& action) {
    auto args = std::make_shared<AppArgs>();
    auto json_out = std::make_shared<std::string>();
    auto dot_out = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("topo", "show where an app runs: its nodes on the mesh, tiles on CPUs, channel hops");
    add_app_options(cmd, *args);
    cmd->add_option("--json", *json_out, "also write the map as JSON to OUT ('-': standard output, the map then goes to stderr)")
        ->check(not_empty());
    cmd->add_option("--dot", *dot_out, "also write the app's graph for Graphviz to OUT ('-': standard output, the map then goes to stderr)")
        ->check(not_empty());
    cmd->callback([args, json_out, dot_out, &action] {
        action = [args, json_out, dot_out] {
            try {
                const AppConfig app = load_app(*args);
                const AppPlan plan = plan_app(app);
                const MemoryPlan memory = plan_memory(app, plan);
                // `--json -`: the JSON on standard output, the map on standard error.
                if (json_to_stdout(*json_out) && json_to_stdout(*dot_out)) {
                    std::fprintf(stderr, "tilepipe: --json - and --dot - both ask for standard output: give one a file\n");
                    return kExitUsage;
                }
                const bool to_stderr = json_to_stdout(*json_out) || json_to_stdout(*dot_out);
                std::fputs(render(app, plan, memory, output_width()).c_str(), to_stderr ? stderr : stdout);
                try {
                    write_json_text(*json_out, as_json(app, plan, memory).dump(2) + "\n");
                    write_json_text(*dot_out, as_dot(app, plan), "--dot");
                } catch (const std::runtime_error& e) {
                    std::fprintf(stderr, "tilepipe: %s\n", e.what());
                    return kExitUsage;
                }
                return kExitOk;
            } catch (const LocatedError& e) {
                std::fprintf(stderr, "tilepipe: %s\n", e.what());
                return kExitUsage;
            }
        };
    });
}

}  // namespace tp::cli
