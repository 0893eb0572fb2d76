// `tilepipe topo CONF`: where an app would run — an ASCII map of the mesh with the node on
// each tile and the CPU that tile runs on, then every channel with its hop count.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/tilepipe/app_args.hpp"
#include "apps/tilepipe/commands.hpp"
#include "framework/graph/app_plan.hpp"

namespace tp::cli {

namespace {

constexpr int kCell = 12;  // characters per tile column

std::string cell(std::string s) {
    if (s.size() > kCell - 1) s = s.substr(0, kCell - 2) + "~";
    return s + std::string(kCell - s.size(), ' ');
}

std::string render(const AppConfig& app, const AppPlan& plan) {
    const Topology& t = plan.topology;
    std::vector<std::string> node_at(static_cast<size_t>(t.tiles()));
    std::vector<int> cpu_at(static_cast<size_t>(t.tiles()), -1);
    const auto& nodes = plan.graph.nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto tile = static_cast<size_t>(plan.tile_of_node[i]);
        node_at[tile] = nodes[i].name;
        cpu_at[tile] = plan.threads.cpu_of_thread[plan.threads.thread_of_node[i]];
    }
    std::string s = "app " + app.name + " on " + t.name() + " (" + t.summary() + "; " +
                    std::to_string(t.usable()) + " usable tiles), placement " + app.placement + ", " +
                    std::to_string(plan.threads.cpu_of_thread.size()) + " thread(s) on " +
                    std::to_string(plan.cpus) + " CPU(s)\n";
    s += "      ";
    for (int x = 0; x < t.width(); ++x) s += cell("x=" + std::to_string(x));
    s += "\n";
    for (int y = 0; y < t.height(); ++y) {
        std::string names = cell("y=" + std::to_string(y)).substr(0, 6), cpus = "      ";
        for (int x = 0; x < t.width(); ++x) {
            const int id = t.tile_at({x, y});
            const auto tile = static_cast<size_t>(id);
            if (t.reserved(id)) names += cell("##"), cpus += cell("");
            else if (node_at[tile].empty()) names += cell("."), cpus += cell(t.cpu_of(id) >= 0 ? "cpu" + std::to_string(t.cpu_of(id)) : "");
            else names += cell(node_at[tile]), cpus += cell("cpu" + std::to_string(cpu_at[tile]));
        }
        s += names + "\n" + cpus + "\n";
    }
    s += "(## reserved, . free)\nchannels:\n";
    for (const auto& l : plan.links) {
        char line[200];
        std::snprintf(line, sizeof line, "  %-14s -> %-14s %-9s %5u slots  %d hop%s\n",
                      nodes[l.from].name.c_str(), nodes[l.to].name.c_str(), l.transport.c_str(),
                      l.capacity, l.hops, l.hops == 1 ? "" : "s");
        s += line;
    }
    char cost[80];
    std::snprintf(cost, sizeof cost, "total hops %d\n", [&] {
        int h = 0;
        for (const auto& l : plan.links) h += l.hops;
        return h;
    }());
    return s + cost;
}

nlohmann::json as_json(const AppConfig& app, const AppPlan& plan) {
    const Topology& t = plan.topology;
    nlohmann::json nodes = nlohmann::json::array(), links = nlohmann::json::array(), reserved = nlohmann::json::array();
    for (size_t i = 0; i < plan.graph.nodes.size(); ++i) {
        const TileXY p = t.xy(plan.tile_of_node[i]);
        nlohmann::json stages = nlohmann::json::array();
        for (size_t s : plan.graph.nodes[i].stages) stages.push_back(app.pipeline[s].stage->name);
        nodes.push_back({{"name", plan.graph.nodes[i].name},
                         {"stages", stages},
                         {"tile", {p.x, p.y}},
                         {"thread", plan.threads.thread_of_node[i]},
                         {"cpu", plan.threads.cpu_of_thread[plan.threads.thread_of_node[i]]}});
    }
    for (const auto& l : plan.links)
        links.push_back({{"from", plan.graph.nodes[l.from].name}, {"to", plan.graph.nodes[l.to].name},
                         {"transport", l.transport}, {"capacity", l.capacity}, {"hops", l.hops}});
    for (int id = 0; id < t.tiles(); ++id)
        if (t.reserved(id)) reserved.push_back({t.xy(id).x, t.xy(id).y});
    return {{"app", app.name}, {"topology", t.name()}, {"width", t.width()}, {"height", t.height()},
            {"usable", t.usable()}, {"reserved", reserved}, {"placement", app.placement},
            {"threads", plan.threads.cpu_of_thread.size()}, {"cpus", plan.cpus},
            {"nodes", nodes}, {"channels", links}};
}

}  // namespace

void add_topo(CLI::App& app, Action& action) {
    auto args = std::make_shared<AppArgs>();
    auto json_out = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("topo", "show where an app runs: its nodes on the mesh, tiles on CPUs, channel hops");
    add_app_options(cmd, *args);
    cmd->add_option("--json", *json_out, "also write the map as JSON to OUT");
    cmd->callback([args, json_out, &action] {
        action = [args, json_out] {
            try {
                const AppConfig app = load_app(*args);
                const AppPlan plan = plan_app(app);
                std::fputs(render(app, plan).c_str(), stdout);
                if (!json_out->empty()) {
                    std::ofstream out(*json_out);
                    if (!(out << as_json(app, plan).dump(2) << '\n')) {
                        std::fprintf(stderr, "tilepipe: --json %s: cannot write\n", json_out->c_str());
                        return kExitUsage;
                    }
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
