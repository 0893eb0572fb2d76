// MeshTree: the tree a collective follows from (or to) its root, laid out by mesh distance.
//
// Ranks join in order of their hops from the root (ties: lower rank first); each takes as
// parent the rank already in the tree that is fewest hops away, then the shallowest, then
// the one with fewer children, with at most `fanout` children per rank. On a mesh a rank's
// parent is thus a neighbour one hop nearer the root (a tile has at most 3 neighbours
// farther from the root than itself, so fanout 4 never forces a longer edge): every message
// of a bcast or a reduce crosses one link, and a rank's depth is its hops from the root.
// Deterministic: every rank computes the same tree from the same inputs.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace tp::mp {

struct MeshTree {
    int root = 0;
    std::vector<int> parent;                 // per rank; -1 at the root
    std::vector<std::vector<int>> children;  // per rank, in joining order
    std::vector<int> depth;                  // per rank; 0 at the root
};

// `hops(a, b)`: the distance between ranks a and b.
MeshTree mesh_tree(int ranks, int root, const std::function<int(int, int)>& hops, int fanout = 4);

}  // namespace tp::mp
