// The edges of an app as its author wires them: the words config parses `next:` into (and the
// C++ builder's node.out()), graph plans from, and the report names edges by.
//
// A node's outputs are its stage's (StageInfo::outputs: `out` for most, a classifier's matches
// and `default`, a router's ports); a farm or map has one, `out` (none when its workers end in
// sinks). Each output feeds exactly one edge; several edges may end at one node (a join).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tilepipe/error.hpp"

namespace tp {

// One entry of a node's `next:` as written.
struct NextEdge {
    std::string output;     // the output's name; empty: `next: NODE`, the node's only output
    std::string to;         // the node, farm or map it feeds
    std::string transport;  // this edge's link; empty: the target's own (its `transport:`)
    uint32_t queue = 0;     // this edge's capacity; 0: the target's own
    Location where;         // the entry (its output's key)
    Location to_where;      // the target's name
    long to_element = -1;   // the C++ builder's node.out(): the target by AppConfig::elements
                            // index (`to` unused); -1: by name
};

// An edge between two pipeline elements (AppConfig::elements indices), resolved.
struct AppEdge {
    size_t from = 0, to = 0;
    uint8_t output = 0;       // index among `from`'s outputs
    std::string output_name;  // its name
    std::string transport;    // as NextEdge: empty / 0 = the target's own
    uint32_t queue = 0;
};

}  // namespace tp
