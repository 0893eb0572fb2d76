#include "apps/tilepipe/app_args.hpp"

namespace tp::cli {

void add_app_options(CLI::App* cmd, AppArgs& a) {
    cmd->add_option("CONF", a.conf, "app config (YAML), e.g. conf/default.yaml")->required();
    cmd->add_option("--pcap", a.pcap, "replace the app's source with a pcap source reading FILE");
    cmd->add_option("--loop", a.loop, "replay the capture N times (0 = until Ctrl-C)")
        ->each([&a](const std::string&) { a.loop_given = true; });
    cmd->add_option("--topology", a.topology, "topology preset: host, tilepro64, epiphany16, epiphany64");
    cmd->add_option("--set", a.sets, "override a node parameter: NODE.PARAM=VALUE (repeatable)")
        ->allow_extra_args(false);
}

AppConfig load_app(const AppArgs& a) {
    AppConfig app = load_app_config(a.conf);
    if (!a.pcap.empty()) replace_source_with_pcap(app, a.pcap);
    if (a.loop_given) set_loop(app, a.loop);
    if (!a.topology.empty()) set_topology(app, a.topology);
    for (const auto& s : a.sets) apply_set(app, s);
    return app;
}

std::string describe(const AppConfig& app) {
    std::string s;
    for (const auto& n : app.pipeline) {
        if (!s.empty()) s += " -> ";
        s += n.name == n.stage->name ? n.name : n.name + "(" + n.stage->name + ")";
    }
    return s;
}

}  // namespace tp::cli
