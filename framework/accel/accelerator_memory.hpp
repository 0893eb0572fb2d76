// What the accelerator's core and its memory placement (accelerator_memory.cpp) share: the
// CPU each worker is pinned to, so a task's buffer can be put on its worker's NUMA node.
#pragma once

#include <vector>

#include "tilepipe/accelerator.hpp"

namespace tp::detail {

// Per worker, the CPU it is pinned to, or -1 when it floats: `options.cpus` when given; with
// `pin` and more CPUs in `allowed` than threads (the caller counts as one), allowed[w + 1]
// (the first is left to the caller); -1 for every worker otherwise.
std::vector<int> accelerator_worker_cpus(const AcceleratorOptions& options, const std::vector<int>& allowed);

}  // namespace tp::detail
