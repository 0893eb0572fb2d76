// Choosing the two CPUs of a ping-pong by distance on a topology (`bench pingpong --hops H`):
// two usable tiles H hops apart, and the CPUs they run on. On `host` a tile is a CPU; on a
// modelled mesh the tiles are spread evenly over the CPUs there are, and when that puts two
// tiles of different distances on the same CPUs the figures would mean nothing, which the
// result says instead.
#pragma once

#include <string>
#include <vector>

#include "framework/topology/topology.hpp"

namespace tp::bench {

struct HopPair {
    bool ok = false;
    int tile_a = -1, tile_b = -1;
    int cpu_a = -1, cpu_b = -1;
    std::string note;  // why there are no figures, or how the tiles were mapped
};

HopPair pick_hop_pair(const Topology& topo, int hops, const std::vector<int>& cpus);

}  // namespace tp::bench
