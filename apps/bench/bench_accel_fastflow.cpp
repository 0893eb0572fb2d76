// FastFlow's farm in accelerator mode (ff_Farm built with an input channel: run, offload,
// load_result_nb / load_result, offload(FF_EOS), wait) for `tilepipe-bench accel`. Compiled
// only into tilepipe-bench, from the headers beside the repository (apps/bench/meson.build).
//
// Configuration, as FastFlow's own notes advise when threads outnumber cores: no_mapping()
// (its default pins thread k to core k mod cores, "usually not a good idea" then), and in the
// `blocking` variant blocking_mode(true) (threads sleep on condition variables instead of
// spinning). Queues keep FastFlow's defaults (unbounded, 2048-entry segments), except with
// `--dispatch on_demand`: set_scheduling_ondemand with tilepipe's per-worker capacity. Tasks travel as
// pointers into an array allocated before the clock starts, FastFlow's usual way; each task is
// written in the timed loop just before its offload, as the tilepipe caller writes its own.
#include <ff/ff.hpp>  // the umbrella: farm.hpp alone misses the pipeline it refers to

#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include "apps/bench/bench_accel.hpp"

namespace tp::bench {
namespace {

struct Worker final : ff::ff_node_t<AccelTask> {
    AccelTask* svc(AccelTask* t) override {
        t->result = accel_work(t->id, t->iters);
        return t;
    }
};

AccelOutcome run_fastflow(const AccelRun& run) {
    std::vector<AccelTask> tasks(run.tasks);  // zeroed (its pages touched) before the clock
    std::vector<std::unique_ptr<ff::ff_node>> workers;
    for (unsigned w = 0; w < run.workers; ++w) workers.push_back(std::make_unique<Worker>());
    ff::ff_Farm<AccelTask, AccelTask> farm(std::move(workers), true);
    farm.no_mapping();
    if (run.blocking) farm.blocking_mode(true);
    if (run.on_demand > 0) farm.set_scheduling_ondemand(static_cast<int>(run.on_demand));
    if (farm.run() < 0) throw std::runtime_error("fastflow: the farm did not start");

    AccelOutcome out;
    AccelTask* r = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < run.tasks; ++i) {
        tasks[i] = AccelTask{i, run.iters, 0};  // made in the loop, as tilepipe's caller makes its own
        farm.offload(&tasks[i]);
        if (run.one_by_one) {
            if (!farm.load_result(r)) throw std::runtime_error("fastflow: a result is missing");
            out.checksum += r->result;
            ++out.results;
            continue;
        }
        while (farm.load_result_nb(r)) {
            out.checksum += r->result;
            ++out.results;
        }
    }
    farm.offload(ff::FF_EOS);
    while (farm.load_result(r)) {
        out.checksum += r->result;
        ++out.results;
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (farm.wait() < 0) throw std::runtime_error("fastflow: the farm failed");
    return out;
}

// Registered before main: this file is linked into tilepipe-bench only.
const bool registered = (fastflow_accelerator() = &run_fastflow, true);

}  // namespace
}  // namespace tp::bench
