// bench accel: offload-to-result throughput of an accelerator (a farm fed from the caller's
// thread) against FastFlow's farm in accelerator mode, same run, same tasks, same busy work.
//
// Every implementation runs the same loop: offload a task, read whatever results are ready
// without blocking, repeat; then end of stream and the remaining results. The clock spans the
// first offload to the last result; the farm is built (threads started) before it. Task sizes
// are calibrated busy work (accel_work) on this machine. Every result is checked against the
// serial sum, so nothing is optimised away and a lost task fails the bench.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/bench/bench_accel.hpp"
#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "tilepipe/accelerator.hpp"

namespace tp::bench {

AccelPeer& fastflow_accelerator() {
    static AccelPeer peer = nullptr;
    return peer;
}

__attribute__((noinline)) uint64_t accel_work(uint64_t id, uint64_t iters) {
    uint64_t x = id | 1;
    for (uint64_t i = 0; i < iters; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;  // dependent: one round per step
        asm volatile("" : "+r"(x));                                // keep every round
    }
    return x;
}

namespace {

const char* kAccelHelp =
    "usage: tilepipe bench accel [options]\n"
    "Offload-to-result throughput (tasks/s) of a farm fed from the caller's thread: tilepipe's\n"
    "Accelerator against FastFlow's ff_Farm with an input channel (tilepipe-bench built beside\n"
    "FastFlow's headers: ../shared/third_party/fastflow), interleaved, same tasks and busy work.\n"
    "The loop: offload a task, read the results ready (non-blocking), repeat; then end of stream\n"
    "and the rest. FastFlow runs with no_mapping(), in blocking mode (and/or its default spin).\n"
    "  --task-ns LIST     busy work per task in ns, calibrated here (default 5,1000)\n"
    "  --tasks N          tasks per measurement (default: 1000000 for tasks under 100 ns,\n"
    "                     else about 0.2 s of work for the farm)\n"
    "  --one-by-one N     also offload N tasks one at a time, each result read (blocking)\n"
    "                     before the next offload: the round trip's latency, mode\n"
    "                     one_by_one (default 20000; 0 leaves it out; not for fastflow_spin)\n"
    "  --workers N        farm workers (default 2)\n"
    "  --dispatch D       tilepipe's dispatch: round_robin or on_demand (default round_robin);\n"
    "                     on_demand also schedules FastFlow's farm on demand, with the same\n"
    "                     number of entries per worker as tilepipe's capacity\n"
    "  --transport T      tilepipe's channels: ring, sm, sm_shared or lock (default ring)\n"
    "  --capacity K       tasks each tilepipe worker may hold (default: the accelerator's,\n"
    "                     1024 round robin, 4 on demand)\n"
    "  --cpus LIST        tilepipe's workers' CPUs, one per worker (default: the accelerator's)\n"
    "  --fastflow LIST    FastFlow variants: blocking, spin, none (default blocking). spin is\n"
    "                     FastFlow's default; with more threads than CPUs under a real-time\n"
    "                     policy (chrt) its spinning threads can starve one another for minutes\n"
    "  --reps N           repetitions of each measurement (default 5, at least 1)\n"
    "  --json OUT         also write {\"bench\": \"accel\", \"rows\": [...]} to OUT\n"
    "  --help             this text\n";

struct AccelCase {
    std::string impl;  // tilepipe, fastflow_blocking, fastflow_spin
    bool one_by_one = false;
    double task_ns = 0;
    uint64_t iters = 0;
    uint64_t tasks = 0;
};

// Rounds of accel_work per nanosecond on this machine (the best of three timings).
double rounds_per_ns() {
    constexpr uint64_t kRounds = 20000000;
    double best = 0;
    for (int k = 0; k < 3; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t x = accel_work(static_cast<uint64_t>(k), kRounds);
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        asm volatile("" ::"r"(x));
        best = std::max(best, static_cast<double>(kRounds) / ns);
    }
    return best;
}

AccelOutcome run_tilepipe(const AccelRun& run, const AcceleratorOptions& base) {
    AcceleratorOptions o = base;
    o.workers = run.workers;
    Accelerator<AccelTask> acc(o, [](AccelTask& t) { t.result = accel_work(t.id, t.iters); });
    AccelOutcome out;
    AccelTask r;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < run.tasks; ++i) {
        acc.offload(AccelTask{i, run.iters, 0});
        if (run.one_by_one) {
            if (!acc.get_result(r)) throw std::runtime_error("tilepipe: a result is missing");
            out.checksum += r.result;
            ++out.results;
            continue;
        }
        while (acc.try_get_result(r)) {
            out.checksum += r.result;
            ++out.results;
        }
    }
    acc.end_of_stream();
    while (acc.get_result(r)) {
        out.checksum += r.result;
        ++out.results;
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    acc.wait();
    return out;
}

}  // namespace

int run_accel(int argc, char** argv) {
    const Args args(argc, argv, {"reps", "json", "task-ns", "tasks", "workers", "dispatch", "transport", "fastflow", "cpus", "capacity",
                                 "one-by-one"},
                    {"help"});
    if (args.has("help")) {
        std::fputs(kAccelHelp, stdout);
        return 0;
    }
    const unsigned reps = static_cast<unsigned>(std::min<uint64_t>(at_least(args, "reps", 5, 1), 1000000));
    const std::string json = args.str("json", "");
    const unsigned workers = static_cast<unsigned>(std::min<uint64_t>(at_least(args, "workers", 2, 1), 64));
    AcceleratorOptions base;
    const std::string dispatch = args.str("dispatch", "round_robin");
    if (dispatch == "on_demand") base.dispatch = TaskDispatch::on_demand;
    else if (dispatch != "round_robin")
        throw std::invalid_argument("--dispatch is round_robin or on_demand, got '" + dispatch + "'");
    base.transport = args.str("transport", "ring");
    if (args.has("capacity"))
        base.capacity = static_cast<uint32_t>(std::min<uint64_t>(at_least(args, "capacity", 1, 1), 1u << 20));
    const std::vector<int> allowed = allowed_cpus();
    for (const auto& cpu : args.list("cpus", {})) base.cpus.push_back(allowed_cpu(cpu, "--cpus", allowed));
    if (!base.cpus.empty() && base.cpus.size() != workers)
        throw std::invalid_argument("--cpus: one CPU per worker (" + std::to_string(workers) + "), got " +
                                    std::to_string(base.cpus.size()));
    std::vector<double> sizes;
    for (const auto& s : args.list("task-ns", {"5", "1000"})) {
        double v = -1;
        try {
            size_t used = 0;
            v = std::stod(s, &used);
            if (used != s.size()) v = -1;
        } catch (const std::exception&) {
            v = -1;
        }
        if (!(v >= 0 && v <= 1e7)) throw std::invalid_argument("--task-ns: each size is 0..10000000 ns, got '" + s + "'");
        sizes.push_back(v);
    }
    std::vector<std::string> impls{"tilepipe"};
    for (const auto& f : args.list("fastflow", {"blocking"})) {
        if (f == "none") continue;
        if (f != "blocking" && f != "spin")
            throw std::invalid_argument("--fastflow: each variant is blocking, spin or none, got '" + f + "'");
        if (fastflow_accelerator() == nullptr) {
            std::fprintf(stderr, "bench accel: skipping fastflow_%s: run tilepipe-bench built beside FastFlow's "
                                 "headers (../shared/third_party/fastflow)\n", f.c_str());
            continue;
        }
        impls.push_back("fastflow_" + f);
    }

    const uint64_t one_by_one = at_least(args, "one-by-one", 20000, 0);
    const double per_ns = rounds_per_ns();
    std::vector<AccelCase> cases;
    std::vector<uint64_t> expected;
    for (double ns : sizes) {
        const uint64_t iters = std::max<uint64_t>(1, static_cast<uint64_t>(ns * per_ns + 0.5));
        uint64_t tasks = args.has("tasks") ? at_least(args, "tasks", 1, 1)
                         : ns < 100    ? 1000000
                                       : std::max<uint64_t>(10000, static_cast<uint64_t>(0.2e9 * workers / ns));
        uint64_t sum = 0;
        for (uint64_t i = 0; i < tasks; ++i) sum += accel_work(i, iters);
        for (const auto& impl : impls) {
            cases.push_back({impl, false, ns, iters, tasks});
            expected.push_back(sum);
        }
        if (one_by_one == 0) continue;
        const uint64_t tasks1 = std::min(one_by_one, tasks);  // the first ones: their sum
        uint64_t sum1 = 0;
        for (uint64_t i = 0; i < tasks1; ++i) sum1 += accel_work(i, iters);
        for (const auto& impl : impls) {
            // FastFlow's spinning threads, more of them than CPUs, take scheduler time slices
            // (milliseconds) to answer one task at a time: minutes per measurement.
            if (impl == "fastflow_spin") continue;
            cases.push_back({impl, true, ns, iters, tasks1});
            expected.push_back(sum1);
        }
    }

    std::vector<std::vector<double>> rate(cases.size());
    uint64_t wrong = 0;
    const unsigned done = interleave(reps, cases.size(), [&](size_t k, unsigned) {
        const AccelCase& c = cases[k];
        AccelRun run{c.tasks, c.iters, workers, c.impl != "fastflow_spin",
                     base.dispatch == TaskDispatch::on_demand ? (base.capacity != 0 ? base.capacity : 4u) : 0u,
                     c.one_by_one};
        const AccelOutcome o = c.impl == "tilepipe" ? run_tilepipe(run, base) : fastflow_accelerator()(run);
        if (o.results != c.tasks || o.checksum != expected[k]) ++wrong;
        rate[k].push_back(static_cast<double>(c.tasks) / o.seconds);
    });
    if (done == 0) return finish("accel", 0, reps);
    keep_reps(rate, done);

    std::vector<nlohmann::json> rows;
    for (size_t k = 0; k < cases.size(); ++k) {
        const Summary s = summarize(rate[k]);
        // tilepipe over this implementation, per repetition (drift hits both alike).
        std::vector<double> ratio;
        for (size_t j = 0; j < cases.size(); ++j)
            if (cases[j].impl == "tilepipe" && cases[j].task_ns == cases[k].task_ns && cases[j].one_by_one == cases[k].one_by_one)
                for (unsigned r = 0; r < done; ++r) ratio.push_back(rate[j][r] / rate[k][r]);
        nlohmann::json row{{"impl", cases[k].impl},
                           {"mode", cases[k].one_by_one ? "one_by_one" : "stream"},
                           {"task_ns", cases[k].task_ns},
                           {"rounds", cases[k].iters},
                           {"tasks", cases[k].tasks},
                           {"workers", workers},
                           {"mtasks_per_s", s.median / 1e6},
                           {"mtasks_min", s.min / 1e6},
                           {"mtasks_max", s.max / 1e6},
                           {"us_per_task", 1e6 / s.median},
                           {"reps", done}};
        if (!ratio.empty()) row["tilepipe_vs"] = summarize(ratio).median;
        rows.push_back(row);
    }
    char title[200];
    std::snprintf(title, sizeof(title),
                  "accel: Mtasks/s offloaded to results, %u workers, %s dispatch, %s channels, %u reps "
                  "(median; tilepipe_vs = median of per-rep tilepipe/this ratios)",
                  workers, dispatch.c_str(), base.transport.c_str(), done);
    print_table(title, rows,
                {{"impl", "/impl"},
                 {"mode", "/mode"},
                 {"task_ns", "/task_ns", 0},
                 {"tasks", "/tasks", 0},
                 {"Mtasks/s", "/mtasks_per_s", 3},
                 {"min", "/mtasks_min", 3},
                 {"max", "/mtasks_max", 3},
                 {"us/task", "/us_per_task", 3},  // one_by_one: the round trip
                 {"tilepipe_vs", "/tilepipe_vs", 2}});
    write_json(json, "accel", rows);
    if (wrong != 0) {
        std::fprintf(stderr, "bench accel: %llu measurements lost or changed results\n", static_cast<unsigned long long>(wrong));
        return 1;
    }
    return finish("accel", done, reps);
}

}  // namespace tp::bench
