// What `bench accel` shares with the peer accelerators a bench program may link (FastFlow's
// farm in accelerator mode, apps/bench/bench_accel_fastflow.cpp): the task, its busy work,
// and the hook through which the peer registers itself before main.
#pragma once

#include <cstdint>

namespace tp::bench {

// One offloaded task: `iters` rounds of busy work seeded by `id`; the worker fills `result`.
struct AccelTask {
    uint64_t id = 0;
    uint64_t iters = 0;
    uint64_t result = 0;
};

// The busy work every implementation runs (a dependent multiply-add chain the compiler cannot
// shorten); not inlined, so each side pays the same call.
uint64_t accel_work(uint64_t id, uint64_t iters);

// One measurement: offload `tasks` tasks of `iters` rounds to a farm of `workers`, reading
// results as they come (after every offload, without blocking), then end of stream and the
// rest; or, `one_by_one`, each task's result (a blocking read) before the next offload.
// `seconds` spans the first offload to the last result.
struct AccelRun {
    uint64_t tasks = 0;
    uint64_t iters = 0;
    unsigned workers = 2;
    bool blocking = true;  // peer: its blocking (sleeping) mode rather than its default spinning
    unsigned on_demand = 0;  // peer: > 0 schedules on demand with this many entries per worker queue
    bool one_by_one = false;  // offload one task and wait for its result, then the next (latency)
};
struct AccelOutcome {
    double seconds = 0;
    uint64_t results = 0;
    uint64_t checksum = 0;  // sum of the results
};

using AccelPeer = AccelOutcome (*)(const AccelRun& run);

// FastFlow's ff_Farm with an input channel (a program built beside its headers); nullptr when absent.
AccelPeer& fastflow_accelerator();

}  // namespace tp::bench
