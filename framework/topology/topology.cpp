#include "framework/topology/topology.hpp"

#include <cstdlib>
#include <stdexcept>

namespace tp {

Topology Topology::mesh(std::string name, int width, int height, std::vector<int> reserved) {
    if (width <= 0 || height <= 0) throw std::invalid_argument("a mesh needs positive width and height");
    Topology t;
    t.name_ = std::move(name);
    t.width_ = width;
    t.height_ = height;
    t.reserved_.assign(static_cast<size_t>(width * height), false);
    for (int r : reserved) {
        if (r < 0 || r >= width * height) throw std::invalid_argument("reserved tile out of the mesh");
        t.reserved_[static_cast<size_t>(r)] = true;
    }
    t.summary_ = std::to_string(width) + "x" + std::to_string(height) + " mesh, XY routing";
    return t;
}

const std::vector<std::string>& Topology::preset_names() {
    static const std::vector<std::string> names{"host", "tilepro64", "epiphany16", "epiphany64"};
    return names;
}

Topology Topology::preset(const std::string& name, size_t min_tiles) {
    if (name == "host") return host_topology(min_tiles);
    if (name == "tilepro64") {
        // A few tiles for the OS, not a row: 58 usable hold the study's largest map (56
        // workers, an emitter and a collector), and both corners stay free, so the 14-hop
        // corner-to-corner path of its latency table can be placed.
        std::vector<int> os_tiles;
        for (int x = 1; x < 7; ++x) os_tiles.push_back(7 * 8 + x);
        return mesh(name, 8, 8, os_tiles);
    }
    if (name == "epiphany16") return mesh(name, 4, 4);
    if (name == "epiphany64") return mesh(name, 8, 8);
    std::string list;
    for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown topology '" + name + "' (known: " + list + ")");
}

int Topology::usable() const {
    int n = 0;
    for (bool r : reserved_) n += r ? 0 : 1;
    return n;
}

int Topology::hops(int a, int b) const {
    if (!dist_.empty()) return dist_[static_cast<size_t>(a * tiles() + b)];
    const TileXY p = xy(a), q = xy(b);
    return std::abs(p.x - q.x) + std::abs(p.y - q.y);
}

}  // namespace tp
