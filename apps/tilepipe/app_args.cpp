#include "apps/tilepipe/app_args.hpp"

#include "apps/tilepipe/commands.hpp"

#include "framework/plugin/plugin_loader.hpp"

namespace tp::cli {

void add_app_options(CLI::App* cmd, AppArgs& a) {
    cmd->add_option("CONF", a.conf, "app config (YAML), e.g. conf/default.yaml")->required();
    // Kept as text: the values are checked where the config's own are, and an error names the
    // option ("--loop -1: ...").
    const auto text = [cmd](const char* name, std::optional<std::string>& to, const char* help) {
        cmd->add_option_function<std::string>(name, [&to](const std::string& v) { to = v; }, help)->check(not_empty());
    };
    AppOverrides& o = a.overrides;
    text("--pcap", o.pcap, "replace the app's source with a pcap source reading FILE (keeps its loop and pacing)");
    text("--loop", o.loop, "replay the capture N times (0 = until Ctrl-C)");
    text("--limit", o.limit, "stop the source after N packets, loops included (tcpreplay's --limit)");
    text("--pps", o.pps, "pace every source at R packets per second (pcap, synth)");
    text("--mbps", o.mbps, "pace every source at R megabits of frames per second (pcap, synth)");
    text("--multiplier", o.multiplier, "replay captures at X times their recorded pace (pcap's speed)");
    cmd->add_flag("--strict", o.strict,
                  "refuse a capture with a damaged record (as tcpdump does) instead of replaying the records before it");
    text("--topology", o.topology, "topology preset: host, tilepro64, epiphany16, epiphany64");
    cmd->add_option("--set", a.overrides.sets,
                    "override a setting: NODE.PARAM=VALUE, FARM.workers=4, FARM.W/NODE.PARAM=VALUE (one worker), "
                    "queue=256, pool.mbufs=8191 (repeatable)")
        ->allow_extra_args(false)
        ->check(not_empty());
    add_plugin_option(cmd, a.plugins);
}

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& plugins) {
    cmd->add_option("--plugin", plugins,
                    "load stages from this shared library (repeatable; also: the config's plugins:, "
                    "$TILEPIPE_PLUGIN_PATH, <libdir>/tilepipe/plugins)")
        ->allow_extra_args(false)
        ->check(not_empty());
}

AppConfig load_app(const AppArgs& a) {
    load_plugins(a.plugins);
    AppConfig app = load_app_config(a.conf);
    apply_overrides(app, a.overrides);
    return app;
}

std::string describe(const AppConfig& app) { return describe_app(app); }

}  // namespace tp::cli
