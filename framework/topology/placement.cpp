#include "framework/topology/placement.hpp"

#include <algorithm>
#include <limits>

#include "framework/topology/detail/greedy_placement.hpp"

namespace tp {

const std::vector<std::string>& placement_names() {
    static const std::vector<std::string> n{"linear", "snake", "compact"};
    return n;
}

PlacementPolicy placement_policy(const std::string& name) {
    if (name == "linear") return PlacementPolicy::Linear;
    if (name == "snake") return PlacementPolicy::Snake;
    if (name == "compact") return PlacementPolicy::Compact;
    throw std::invalid_argument("unknown placement '" + name + "' (known: linear, snake, compact)");
}

double placement_cost(const Topology& topo, const std::vector<TrafficEdge>& edges,
                      const std::vector<int>& tiles) {
    double c = 0;
    for (const auto& e : edges) c += e.weight * topo.hops(tiles[e.from], tiles[e.to]);
    return c;
}

namespace {

// Usable tiles in the order a policy visits them.
std::vector<int> tile_order(const Topology& topo, bool snake) {
    std::vector<int> order;
    for (int y = 0; y < topo.height(); ++y)
        for (int i = 0; i < topo.width(); ++i) {
            const int x = snake && (y % 2 == 1) ? topo.width() - 1 - i : i;
            const int t = topo.tile_at({x, y});
            if (!topo.reserved(t)) order.push_back(t);
        }
    return order;
}

// Fixed tiles first (checked), then every other node in order onto the free tiles of `order`.
std::vector<int> fill(const Topology& topo, const PlacementRequest& req, const std::vector<int>& order) {
    std::vector<int> tiles(req.nodes, -1);
    std::vector<bool> used(static_cast<size_t>(topo.tiles()), false);
    for (size_t i = 0; i < req.fixed.size() && i < req.nodes; ++i) {
        if (!req.fixed[i]) continue;
        const TileXY p = *req.fixed[i];
        if (!topo.contains(p))
            throw PlacementError(i, "tile [" + std::to_string(p.x) + ", " + std::to_string(p.y) +
                                        "] is outside the " + std::to_string(topo.width()) + "x" +
                                        std::to_string(topo.height()) + " " + topo.name() + " mesh");
        const int t = topo.tile_at(p);
        if (topo.reserved(t))
            throw PlacementError(i, "tile [" + std::to_string(p.x) + ", " + std::to_string(p.y) +
                                        "] is reserved on " + topo.name());
        if (used[static_cast<size_t>(t)])
            throw PlacementError(i, "tile [" + std::to_string(p.x) + ", " + std::to_string(p.y) +
                                        "] is already taken by another node");
        used[static_cast<size_t>(t)] = true;
        tiles[i] = t;
    }
    size_t next = 0;
    for (size_t i = 0; i < req.nodes; ++i) {
        if (tiles[i] >= 0) continue;
        while (next < order.size() && used[static_cast<size_t>(order[next])]) ++next;
        if (next == order.size())
            throw PlacementError(i, "the app needs " + std::to_string(req.nodes) + " tiles but " +
                                        topo.name() + " has " + std::to_string(topo.usable()) + " usable");
        tiles[i] = order[next];
        used[static_cast<size_t>(order[next])] = true;
    }
    return tiles;
}

}  // namespace

std::vector<int> detail::greedy_placement(const Topology& topo, const PlacementRequest& req) {
    // Greedy: fixed nodes stay; the others, in order, take the free tile that adds the least
    // weighted hops to already placed neighbours (ties: snake order, which keeps chains tight).
    const std::vector<int> order = tile_order(topo, true);
    std::vector<int> tiles(req.nodes, -1);
    std::vector<bool> used(static_cast<size_t>(topo.tiles()), false);
    {
        const std::vector<int> f = fill(topo, req, order);  // also validates fixed tiles
        for (size_t i = 0; i < req.nodes; ++i)
            if (i < req.fixed.size() && req.fixed[i]) {
                tiles[i] = f[i];
                used[static_cast<size_t>(f[i])] = true;
            }
    }
    for (size_t i = 0; i < req.nodes; ++i) {
        if (tiles[i] >= 0) continue;
        double best = std::numeric_limits<double>::max();
        int best_tile = -1;
        for (int t : order) {
            if (used[static_cast<size_t>(t)]) continue;
            double c = 0;
            for (const auto& e : req.edges) {
                if (e.from == i && tiles[e.to] >= 0) c += e.weight * topo.hops(t, tiles[e.to]);
                if (e.to == i && tiles[e.from] >= 0) c += e.weight * topo.hops(tiles[e.from], t);
            }
            if (c < best) best = c, best_tile = t;
        }
        tiles[i] = best_tile;
        used[static_cast<size_t>(best_tile)] = true;
    }
    return tiles;
}

std::vector<int> place_nodes(const Topology& topo, const PlacementRequest& req) {
    if (static_cast<int>(req.nodes) > topo.usable())
        throw PlacementError(static_cast<size_t>(topo.usable()),
                             "the app needs " + std::to_string(req.nodes) + " tiles but " + topo.name() +
                                 " has " + std::to_string(topo.usable()) + " usable");
    switch (req.policy) {
        case PlacementPolicy::Linear: return fill(topo, req, tile_order(topo, false));
        case PlacementPolicy::Snake: return fill(topo, req, tile_order(topo, true));
        case PlacementPolicy::Compact: break;
    }
    std::vector<int> tiles = detail::greedy_placement(topo, req);
    // Never worse than the simple policies on the cost model.
    for (bool snake : {false, true}) {
        const std::vector<int> alt = fill(topo, req, tile_order(topo, snake));
        if (placement_cost(topo, req.edges, alt) < placement_cost(topo, req.edges, tiles)) tiles = alt;
    }
    return tiles;
}

std::vector<size_t> balanced_runs(const std::vector<double>& load, size_t groups) {
    const size_t n = load.size();
    if (groups == 0 || groups > n) throw std::invalid_argument("balanced_runs needs 1 <= groups <= nodes");
    std::vector<double> prefix(n + 1, 0.0);
    for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + load[i];
    auto weight = [&](size_t j, size_t i) { return prefix[i] - prefix[j]; };  // nodes j..i-1
    std::vector<size_t> run(n);

    // Apps too big for the O(groups x n^2) passes below: cut where the running load passes
    // each equal share, leaving at least one node for every run still to come.
    if (double(groups) * double(n) * double(n) > 2e7) {
        size_t g = 0;
        for (size_t i = 0; i < n; ++i) {
            const bool share_passed = prefix[i] >= prefix[n] * double(g + 1) / double(groups);
            if (g + 1 < groups && i > 0 && run[i - 1] == g && (share_passed || n - i == groups - g - 1)) ++g;
            run[i] = g;
        }
        return run;
    }

    const double inf = std::numeric_limits<double>::infinity();
    const double tolerance = 1e-9 * std::max(1.0, prefix[n]);
    // Pass 1: heaviest[g][i], the lightest heaviest run possible when nodes 0..i-1 form g runs.
    std::vector<std::vector<double>> heaviest(groups + 1, std::vector<double>(n + 1, inf));
    heaviest[0][0] = 0;
    for (size_t g = 1; g <= groups; ++g)
        for (size_t i = g; i + (groups - g) <= n; ++i)
            for (size_t j = g - 1; j < i; ++j)
                heaviest[g][i] = std::min(heaviest[g][i], std::max(heaviest[g - 1][j], weight(j, i)));
    const double bound = heaviest[groups][n] + tolerance;

    // Pass 2: among the cuts with no run above that, the most even: least sum of squared run
    // loads, then of squared run lengths (so equal loads split by count). Sums compared
    // lexicographically add up run by run, so the pass is exact.
    struct Spread {
        double load = 0, len = 0;
        bool operator<(const Spread& o) const {
            if (load < o.load - 1e-9 * std::max(1.0, o.load)) return true;
            if (load > o.load + 1e-9 * std::max(1.0, o.load)) return false;
            return len < o.len;
        }
    };
    const Spread none{inf, inf};
    std::vector<std::vector<Spread>> best(groups + 1, std::vector<Spread>(n + 1, none));
    std::vector<std::vector<size_t>> cut(groups + 1, std::vector<size_t>(n + 1, 0));
    best[0][0] = Spread{};
    for (size_t g = 1; g <= groups; ++g)
        for (size_t i = g; i + (groups - g) <= n; ++i)
            for (size_t j = g - 1; j < i; ++j) {
                const double w = weight(j, i);
                if (w > bound || best[g - 1][j].load == inf) continue;
                const Spread v{best[g - 1][j].load + w * w, best[g - 1][j].len + double(i - j) * double(i - j)};
                if (v < best[g][i]) best[g][i] = v, cut[g][i] = j;
            }
    for (size_t g = groups, i = n; g > 0; --g) {
        const size_t j = cut[g][i];
        for (size_t k = j; k < i; ++k) run[k] = g - 1;
        i = j;
    }
    return run;
}

std::vector<int> place_runs_on_host(const Topology& topo, const std::vector<size_t>& run_of_node) {
    std::vector<int> cpu_order;
    std::vector<std::vector<int>> tiles_of;  // per CPU in tile order
    for (int t = 0; t < topo.tiles(); ++t) {
        if (topo.reserved(t) || topo.cpu_of(t) < 0) continue;
        auto it = std::find(cpu_order.begin(), cpu_order.end(), topo.cpu_of(t));
        if (it == cpu_order.end()) {
            cpu_order.push_back(topo.cpu_of(t));
            tiles_of.emplace_back();
            it = cpu_order.end() - 1;
        }
        tiles_of[static_cast<size_t>(it - cpu_order.begin())].push_back(t);
    }
    std::vector<int> tiles(run_of_node.size());
    std::vector<size_t> used(tiles_of.size(), 0);
    for (size_t i = 0; i < run_of_node.size(); ++i) {
        const size_t g = run_of_node[i];
        if (g >= tiles_of.size() || used[g] == tiles_of[g].size()) return {};
        tiles[i] = tiles_of[g][used[g]++];
    }
    return tiles;
}

ThreadMap map_tiles_to_cpus(const Topology& topo, const std::vector<int>& tile_of_node,
                            const std::vector<int>& cpus, bool per_tile, const std::vector<double>& load) {
    ThreadMap m;
    const size_t n = tile_of_node.size();
    m.thread_of_node.resize(n);
    if (topo.is_host() && !per_tile) {
        // The host says which CPU each tile is: one thread per CPU in use, holding its tiles.
        std::vector<int> cpu_seen;
        for (size_t i = 0; i < n; ++i) {
            const int cpu = topo.cpu_of(tile_of_node[i]);
            auto it = std::find(cpu_seen.begin(), cpu_seen.end(), cpu);
            if (it == cpu_seen.end()) {
                cpu_seen.push_back(cpu);
                it = cpu_seen.end() - 1;
            }
            m.thread_of_node[i] = static_cast<size_t>(it - cpu_seen.begin());
        }
        m.cpu_of_thread = cpu_seen;
        return m;
    }
    if (per_tile || n <= cpus.size()) {
        for (size_t i = 0; i < n; ++i) {
            m.thread_of_node[i] = i;
            const int own = topo.cpu_of(tile_of_node[i]);
            m.cpu_of_thread.push_back(own >= 0 ? own : cpus[i % cpus.size()]);
        }
        return m;
    }
    m.thread_of_node = balanced_runs(load.size() == n ? load : std::vector<double>(n, 1.0), cpus.size());
    m.cpu_of_thread = cpus;
    return m;
}

}  // namespace tp
