// The `tiles` backend: every rank is a thread on a tile of a mesh, and messages travel over
// one noc::MessageNetwork spanning the ranks' tiles (rank r owns network tile r, standing for
// mesh tile tile_of_rank[r]).
//
// Ranks are placed by the topology's placement (`linear` by default, so with `epiphany16`
// 16 ranks fill the 4x4 mesh row by row and a 4x4 Cartesian grid matches it), and pinned to
// the CPUs the same way an app's tiles are (several ranks share a CPU when they outnumber
// them). A blocked rank waits through `wait`: by default it spins, then parks on its queue's
// doorbell (tiles_wait_policy: no yield phase, see tiles_world.cpp), so ranks that outnumber
// CPUs still progress and one behind another thread on its CPU is woken by its peer's answer. See tiles_comm.hpp for the protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "framework/mp/comm.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::mp {

// The runtime's wait policy without its yield phase: what a blocked rank does by default.
WaitPolicy tiles_wait_policy();

struct TilesOptions {
    int ranks = 4;
    std::string topology;              // a preset (epiphany16, tilepro64, ...); empty: the host
    std::string placement = "linear";  // linear, snake or compact
    size_t replace_buffer = 65536;     // bytes sendrecv_replace stages at most (>= one segment)
    uint32_t credits = 32;             // segments in flight from one rank to another (>= 2)
    bool pin = true;                   // pin rank threads to CPUs
    WaitPolicy wait = tiles_wait_policy();
};

// One segment's payload in bytes (the network's longest message less the data header).
inline constexpr size_t kTilesSegmentBytes = 126 * 8;

// Runs `fn` once per rank, each on its own thread, and returns when all have returned.
// Throws the first error a rank raised (an mp::Error names the rank and the call; the ranks
// that then failed waiting on it are not reported), or std::invalid_argument for options the
// topology cannot hold.
void run_tiles(const TilesOptions& options, const std::function<void(Comm&)>& fn);

}  // namespace tp::mp
