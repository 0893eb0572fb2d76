// The greedy pass of `compact` placement on its own, without the fallback to linear or snake
// that place_nodes adds, so that tests can measure what the pass itself achieves.
#pragma once

#include <vector>

#include "framework/topology/placement.hpp"

namespace tp::detail {

// Fixed nodes stay on their (checked) tiles; every other node, in index order, takes the free
// tile that adds the least weighted hops to its already placed neighbours, ties broken in snake
// order. Throws PlacementError as place_nodes does.
std::vector<int> greedy_placement(const Topology& topo, const PlacementRequest& req);

}  // namespace tp::detail
