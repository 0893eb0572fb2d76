// Command-line overrides of an app config: `--set PATH=VALUE`, `--pcap FILE`, `--loop N`,
// `--topology NAME`, and tcpreplay's `--limit N`, `--pps R`, `--mbps R`, `--multiplier X`. Each reaches a setting a config file can hold, is checked as the file's
// value would be, and an error names the override: `--set fw.workers=x: workers expects ...`.
//
// PATH names one setting; its last part is the key, the parts before it the place:
//   KEY                  top level: app, transport, queue, topology, placement, memory
//   pool.KEY             pool.mbufs, pool.cache, pool.data_room
//   runtime.KEY          runtime.threads, runtime.fuse, runtime.idle, runtime.rank_links, runtime.prefetch
//   chaos.KEY, network.KEY  the `chaos:` and `network:` settings
//   FARM.KEY             a farm's or map's own: workers, dispatch, collect, emitter, multicast,
//                        transport, queue, memory
//   NODE.KEY             a stage node: a parameter of its stage, or transport, queue, tile, memory; in a
//                        farm or map, for every worker
//   FARM.NODE.KEY        the same, named through its farm (every worker)
//   FARM.W/NODE.KEY      worker W's instance only (stage parameters, memory, tile): the name the report
//                        prints for it (`fw.0/acl`, or `fw.0.acl` for a worker pipeline's tile;
//                        '.' and '/' are the same separator)
//
// Two overrides of one setting are refused (`--loop 2 --set src.loop=3`, the same --set twice):
// which one wins would be a guess.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "framework/config/app_config.hpp"

namespace tp {

struct AppOverrides {
    std::optional<std::string> pcap;      // --pcap FILE
    std::optional<std::string> loop;     // --loop N, as written
    std::optional<std::string> topology;  // --topology NAME
    std::optional<std::string> latency;   // --latency off|all|sample N (run)
    std::vector<std::string> sets;        // --set PATH=VALUE, in order
    bool strict = false;                  // --strict: sources refuse damaged captures
    std::optional<std::string> limit;     // --limit N: the source stops after N packets
    std::optional<std::string> pps;       // --pps R, --mbps R, --multiplier X: every source's
    std::optional<std::string> mbps;      // pace (pps, mbps, speed), as tcpreplay's options
    std::optional<std::string> multiplier;
};

// Applies every override, then re-runs the checks that span settings (check_app).
void apply_overrides(AppConfig& app, const AppOverrides& o);

// One `--set PATH=VALUE` (and check_app); tests and programs that build on a config.
void apply_set(AppConfig& app, const std::string& assignment);
// `--pcap FILE`: the app's source becomes a `pcap` source reading FILE; it keeps its name and
// the settings a pcap source also has (loop, pps, mbps, speed, transport, queue, tile, memory).
void replace_source_with_pcap(AppConfig& app, const std::string& file);
// `--loop N`: replay count of every source that replays.
void set_loop(AppConfig& app, const std::string& loops);
// `--topology NAME`.
void set_topology(AppConfig& app, const std::string& name);

}  // namespace tp
