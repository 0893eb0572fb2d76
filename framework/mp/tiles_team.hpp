// TilesTeam: a tiles rank's Team when it owns several tiles (TilesOptions::tiles_per_rank).
// Built on tilepipe's accelerator: its workers are the helper threads on the rank's other
// tiles (pinned to their CPUs), the rank's thread is the caller, offloading one chunk per
// helper and running chunk 0 itself before it collects their results. The accelerator lives as
// long as the rank, so its workers sleep between loops instead of being started each time.
// Thread-safety: the rank's thread only (the accelerator's caller); `body` runs on every tile.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "tilepipe/accelerator.hpp"
#include "tilepipe/mp.hpp"

namespace tp::mp::detail {

class TilesTeam final : public Team {
public:
    // `rank`: for errors; `tiles`: the rank's tiles, its own first; `cpus`: the CPU of each
    // of the other tiles, where the helpers are pinned when `pin`.
    TilesTeam(int rank, int tiles, std::vector<int> cpus, bool pin);
    int size() const override { return tiles_; }
    void parallel_for(size_t n, const std::function<void(size_t, size_t, int)>& body) override;

private:
    struct Chunk {
        size_t begin = 0, end = 0;
        int tile = 0;
        const std::function<void(size_t, size_t, int)>* body = nullptr;
    };
    int rank_, tiles_;
    std::unique_ptr<Accelerator<Chunk>> helpers_;
};

}  // namespace tp::mp::detail
