#include "apps/bench/hop_pair.hpp"

namespace tp::bench {

namespace {
std::string xy(const Topology& t, int tile) {
    return "[" + std::to_string(t.xy(tile).x) + "," + std::to_string(t.xy(tile).y) + "]";
}
}  // namespace

HopPair pick_hop_pair(const Topology& topo, int hops, const std::vector<int>& cpus) {
    HopPair p;
    std::vector<int> usable;
    for (int t = 0; t < topo.tiles(); ++t)
        if (!topo.reserved(t)) usable.push_back(t);
    for (size_t i = 0; i < usable.size() && p.tile_a < 0; ++i)
        for (size_t j = 0; j < usable.size(); ++j)
            if (i != j && topo.hops(usable[i], usable[j]) == hops) {
                p.tile_a = usable[i];
                p.tile_b = usable[j];
                break;
            }
    if (p.tile_a < 0) {
        p.note = "no two usable tiles of " + topo.name() + " are " + std::to_string(hops) + " hops apart";
        return p;
    }
    // The CPU a tile runs on: its own on `host`; on a mesh, the tiles spread evenly over CPUs.
    auto cpu_of = [&](int tile) {
        if (topo.is_host()) return topo.cpu_of(tile);
        size_t rank = 0;
        while (usable[rank] != tile) ++rank;
        return cpus[rank * cpus.size() / usable.size()];
    };
    p.cpu_a = cpu_of(p.tile_a);
    p.cpu_b = cpu_of(p.tile_b);
    const std::string where = "tiles " + xy(topo, p.tile_a) + " and " + xy(topo, p.tile_b) + " of " + topo.name() +
                              " (" + std::to_string(hops) + " hops) run on CPUs " + std::to_string(p.cpu_a) + "," +
                              std::to_string(p.cpu_b);
    if (p.cpu_a == p.cpu_b) {
        p.note = where + ": one CPU, so a ping-pong between them measures nothing";
        return p;
    }
    if (!topo.is_host() && static_cast<size_t>(topo.usable()) > cpus.size()) {
        p.note = where + "; but this host has " + std::to_string(cpus.size()) + " CPUs for " +
                 std::to_string(topo.usable()) + " tiles, so tiles of different distances share the same CPU "
                 "pairs and the hop count cannot be told apart here";
        return p;
    }
    p.ok = true;
    p.note = where;
    return p;
}

}  // namespace tp::bench
