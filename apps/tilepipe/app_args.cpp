#include "apps/tilepipe/app_args.hpp"

#include "framework/plugin/plugin_loader.hpp"

namespace tp::cli {

void add_app_options(CLI::App* cmd, AppArgs& a) {
    cmd->add_option("CONF", a.conf, "app config (YAML), e.g. conf/default.yaml")->required();
    // Kept as text: the values are checked where the config's own are, and an error names the
    // option ("--loop -1: ...").
    cmd->add_option_function<std::string>("--pcap", [&a](const std::string& v) { a.overrides.pcap = v; },
                                          "replace the app's source with a pcap source reading FILE (keeps its loop and pacing)");
    cmd->add_option_function<std::string>("--loop", [&a](const std::string& v) { a.overrides.loop = v; },
                                          "replay the capture N times (0 = until Ctrl-C)");
    cmd->add_flag("--strict", a.overrides.strict,
                  "refuse a capture with a damaged record (as tcpdump does) instead of replaying the records before it");
    cmd->add_option_function<std::string>("--topology", [&a](const std::string& v) { a.overrides.topology = v; },
                                          "topology preset: host, tilepro64, epiphany16, epiphany64");
    cmd->add_option("--set", a.overrides.sets,
                    "override a setting: NODE.PARAM=VALUE, FARM.workers=4, FARM.W/NODE.PARAM=VALUE (one worker), "
                    "queue=256, pool.mbufs=8191 (repeatable)")
        ->allow_extra_args(false);
    add_plugin_option(cmd, a.plugins);
}

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& plugins) {
    cmd->add_option("--plugin", plugins,
                    "load stages from this shared library (repeatable; also: the config's plugins:, "
                    "$TILEPIPE_PLUGIN_PATH, <libdir>/tilepipe/plugins)")
        ->allow_extra_args(false);
}

AppConfig load_app(const AppArgs& a) {
    load_plugins(a.plugins);
    AppConfig app = load_app_config(a.conf);
    apply_overrides(app, a.overrides);
    return app;
}

std::string describe(const AppConfig& app) { return describe_app(app); }

}  // namespace tp::cli
