#include "framework/mp/mesh_tree.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace tp::mp {

MeshTree mesh_tree(int ranks, int root, const std::function<int(int, int)>& hops, int fanout) {
    MeshTree t;
    t.root = root;
    t.parent.assign(ranks, -1);
    t.children.assign(ranks, {});
    t.depth.assign(ranks, 0);
    std::vector<int> order(ranks);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return std::make_pair(a != root, hops(root, a)) < std::make_pair(b != root, hops(root, b)); });
    for (size_t i = 1; i < order.size(); ++i) {
        const int r = order[i];
        int best = -1;
        std::tuple<int, int, size_t> best_key;
        for (size_t j = 0; j < i; ++j) {
            const int p = order[j];
            if (static_cast<int>(t.children[p].size()) >= fanout) continue;
            const auto key = std::make_tuple(hops(p, r), t.depth[p], t.children[p].size());
            if (best < 0 || key < best_key) {
                best = p;
                best_key = key;
            }
        }
        t.parent[r] = best;  // there is always one: i ranks offer i x fanout - (i - 1) >= 1 places
        t.children[best].push_back(r);
        t.depth[r] = t.depth[best] + 1;
    }
    return t;
}

}  // namespace tp::mp
