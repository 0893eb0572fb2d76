// The `tiles` backend: every rank is a thread on a tile of a mesh, and messages travel over
// one noc::MessageNetwork spanning the ranks' tiles (rank r owns network tile r, standing for
// mesh tile tile_of_rank[r]).
//
// Ranks are placed by the topology's placement (`linear` by default, so with `epiphany16`
// 16 ranks fill the 4x4 mesh row by row and a 4x4 Cartesian grid matches it), and pinned to
// the CPUs the same way an app's tiles are (several ranks share a CPU when they outnumber
// them). A blocked rank spins, then parks on its queue's doorbell (tiles_wait_policy: no
// yield phase, see tiles_world.cpp), so ranks that outnumber CPUs still progress and one
// behind another thread on its CPU is woken by its peer's answer. See tiles_comm.hpp for the protocol.
#pragma once

#include <cstddef>
#include <functional>

#include "tilepipe/mp.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::mp {

// One segment's payload in bytes (the network's longest message less the data header).
inline constexpr size_t kTilesSegmentBytes = 126 * 8;
// The least replace buffer (TilesOptions::replace_buffer): the Epiphany study's 256 bytes.
inline constexpr size_t kTilesMinReplaceBuffer = 256;

// The wait policy of run_tiles (tilepipe/mp.hpp): the runtime's, without its yield phase.
WaitPolicy tiles_wait_policy();

// run_tiles with a wait policy of its own: tests park at once, or with a long timeout.
void run_tiles(const TilesOptions& options, const WaitPolicy& wait, const std::function<void(Comm&)>& fn);

}  // namespace tp::mp
