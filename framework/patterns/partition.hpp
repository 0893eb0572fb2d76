// Partition: how a map splits a task of n items (matrix rows, descriptors of a burst) among W
// workers: contiguous blocks in worker order, sizes differing by at most one, the remainder
// spread over the first n mod W workers. A worker may get an empty block when W > n.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tp {

struct Block {
    uint32_t begin = 0;
    uint32_t count = 0;
    uint32_t end() const { return begin + count; }
};

// Worker w's block (w < workers, workers >= 1).
constexpr Block block_of(uint32_t w, uint32_t workers, uint32_t items) {
    const uint32_t base = items / workers, extra = items % workers;
    return Block{w * base + std::min(w, extra), base + (w < extra ? 1u : 0u)};
}

}  // namespace tp
