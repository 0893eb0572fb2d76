// Topology: the tiles an app is placed on — a W x H mesh with (x, y) coordinates, a hop
// distance, and reserved tiles no node may use.
//
// Mesh presets model the many-cores the design comes from: `tilepro64` (8x8; six tiles of
// the bottom row serve the OS, 58 run user code, the corners among them), `epiphany16` (4x4), `epiphany64` (8x8), with
// X-then-Y dimension-ordered routing, so hops = |dx| + |dy|. `host` is the real machine read
// with hwloc: one tile per allowed CPU, a row per NUMA node, and a distance taken from the
// cache hierarchy instead of a mesh (see host_topology.cpp); when an app has more nodes than
// the host has CPUs, each CPU offers several tiles (0 hops apart), which share its thread.
// Immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tp {

struct TileXY {
    int x = 0;
    int y = 0;
    bool operator==(const TileXY&) const = default;
};

class Topology {
public:
    // A W x H mesh with XY routing; `reserved` are tile ids.
    static Topology mesh(std::string name, int width, int height, std::vector<int> reserved = {});
    // tilepro64, epiphany16, epiphany64 or host (sized to offer at least `min_tiles`); throws
    // std::invalid_argument otherwise.
    static Topology preset(const std::string& name, size_t min_tiles = 0);
    static const std::vector<std::string>& preset_names();

    const std::string& name() const { return name_; }
    int width() const { return width_; }
    int height() const { return height_; }
    int tiles() const { return width_ * height_; }
    TileXY xy(int tile) const { return {tile % width_, tile / width_}; }
    int tile_at(TileXY p) const { return p.y * width_ + p.x; }
    bool contains(TileXY p) const { return p.x >= 0 && p.y >= 0 && p.x < width_ && p.y < height_; }
    bool reserved(int tile) const { return reserved_[tile]; }
    int usable() const;

    // Hops between two tiles: XY routing on meshes, the cache-hierarchy distance on `host`.
    int hops(int a, int b) const;
    // The OS CPU a tile stands for (`host` only); -1 on a modelled mesh.
    int cpu_of(int tile) const { return cpu_.empty() ? -1 : cpu_[tile]; }
    bool is_host() const { return !cpu_.empty(); }
    // Free text on how the tiles were derived (host: cores, caches, NUMA nodes).
    const std::string& summary() const { return summary_; }

private:
    friend Topology host_topology(size_t min_tiles);
    std::string name_;
    int width_ = 0, height_ = 0;
    std::vector<bool> reserved_;
    std::vector<int> cpu_;       // host: OS CPU per tile
    std::vector<uint8_t> dist_;  // host: tiles x tiles distance matrix
    std::string summary_;
};

// The real machine, from hwloc (defined in host_topology.cpp), with enough tiles per CPU to
// offer at least `min_tiles`.
Topology host_topology(size_t min_tiles = 0);

}  // namespace tp
