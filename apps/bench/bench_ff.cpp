// `tilepipe bench ff-grain|ff-matmul|ff-homing`: the FastFlow-on-TILEPro64 study's Figs. 6, 9, 7 on
// tilepipe's accelerator. ff-grain: a farm's speedup against task grain (tasks that compute
// for a given time, W workers against the same tasks run in turn by one thread). ff-matmul: a
// stream of M x M single-precision matrix products offloaded to the accelerator, for M = 32,
// 64, 128 by default, speedup and GFLOPS against the products run in turn. ff-homing (Fig. 7):
// the same products, each task's buffers allocated by the accelerator under a memory policy
// (AcceleratorOptions::memory), GFLOPS per policy. All write a `scaling` report that
// `tilepipe plot` draws.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/bench/benches.hpp"
#include "apps/bench/harness.hpp"
#include "framework/config/memory_settings.hpp"
#include "framework/output/json_out.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/memory_binding.hpp"
#include "tilepipe/accelerator.hpp"

namespace tp::bench {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::vector<uint64_t> numbers(const Args& args, const std::string& name, const std::vector<std::string>& fallback) {
    std::vector<uint64_t> out;
    for (const std::string& v : args.list(name, fallback)) {
        size_t used = 0;
        unsigned long long x = 0;
        try {
            x = std::stoull(v, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != v.size() || v.empty() || x < 1 || x > (1ull << 30))
            throw std::invalid_argument(args.label(name) + ": '" + v + "' is not a positive count");
        out.push_back(x);
    }
    return out;
}

// Seconds to run `tasks` through `acc` (offload all, read all).
template <typename Task>
double stream(Accelerator<Task>& acc, std::vector<Task>& tasks) {
    const double t0 = now_s();
    size_t got = 0;
    Task done;
    for (Task& t : tasks) {
        acc.offload(t);
        while (acc.try_get_result(done)) ++got;
    }
    acc.end_of_stream();
    while (acc.get_result(done)) ++got;
    const double s = now_s() - t0;
    if (got != tasks.size()) throw std::runtime_error("accelerator returned " + std::to_string(got) + " results");
    return s;
}

// Seconds to run `tasks` tasks through an accelerator of `w` workers.
template <typename Task>
double through(unsigned w, std::vector<Task>& tasks, void (*work)(Task&)) {
    AcceleratorOptions o;
    o.workers = w;
    o.name = "ff";
    Accelerator<Task> acc(o, [work](Task& t) { work(t); });
    return stream(acc, tasks);
}

// A task of fixed work (not of fixed time: a worker that shares its CPU must take longer,
// as the study's tiles never did): `iters` rounds of a dependent multiply-add.
struct Spin {
    uint64_t iters = 0;
    double sink = 0;
};
volatile double g_sink;  // the work's result goes somewhere, so no compiler drops it
void spin(Spin& t) {
    double x = 1.0;
    for (uint64_t i = 0; i < t.iters; ++i) x = x * 0.999999 + 1e-7;
    t.sink = x;
    g_sink = x;
}
// Rounds of spin() per microsecond on this thread (the best of a few tries).
double rounds_per_us() {
    double best = 0;
    for (int k = 0; k < 5; ++k) {
        Spin t{2000000};
        const double t0 = now_s();
        spin(t);
        best = std::max(best, 2e6 / ((now_s() - t0) * 1e6));
    }
    return best;
}

struct Product {
    const float* a = nullptr;
    const float* b = nullptr;
    float* c = nullptr;
    int m = 0;
};
void multiply(Product& p) {
    const int m = p.m;
    std::fill(p.c, p.c + size_t(m) * m, 0.0f);
    for (int i = 0; i < m; ++i)
        for (int k = 0; k < m; ++k) {
            const float aik = p.a[i * m + k];
            for (int j = 0; j < m; ++j) p.c[i * m + j] += aik * p.b[k * m + j];
        }
}

// The sides --m gives (default 32, 64, 128, as the study's), each at most 4096.
std::vector<int> matrix_sides(const Args& args) {
    std::vector<int> out;
    for (uint64_t m : numbers(args, "m", {"32", "64", "128"})) {
        if (m > 4096) throw std::invalid_argument(args.label("m") + ": " + std::to_string(m) + " is above 4096");
        out.push_back(static_cast<int>(m));
    }
    return out;
}

// A few distinct operand pairs, reused round the stream (the study streams products of
// matrices already in memory): pair i at [i * M * M, (i + 1) * M * M).
constexpr size_t kPairs = 16;
struct Operands {
    explicit Operands(int m) : a(kPairs * size_t(m) * m), b(a.size()) {
        for (size_t i = 0; i < a.size(); ++i) {
            a[i] = float(i % 7) - 3;
            b[i] = float(i % 5) - 2;
        }
    }
    std::vector<float> a, b;
};

void write_report(const std::string& path, const std::string& title, const std::string& x, const std::string& y,
                  const std::string& ylabel, const nlohmann::json& rows, const nlohmann::json& extra = nlohmann::json::object()) {
    if (path.empty()) return;
    nlohmann::json j{{"bench", "scaling"}, {"title", title}, {"x", x}, {"y", y},
                     {"xlabel", x},        {"ylabel", ylabel}, {"rows", rows}};
    j.update(extra);
    write_json_text(path, j.dump(1) + "\n");
}

const char* kGrainHelp =
    "usage: tilepipe bench ff-grain [options]\n"
    "  a farm's speedup against task grain (the FastFlow study's Fig. 6): tasks computing for\n"
    "  GRAIN us each (a fixed amount of arithmetic, calibrated on this thread), through the\n"
    "  accelerator's W workers, against one thread running them in turn\n"
    "  --grain-us LIST   task grains in us (default 1,10,100,1000)\n"
    "  --workers LIST    worker counts (default 1,2,4,...,CPUs)\n"
    "  --work-ms N       each grain's total work, in ms, so small grains have many tasks (default 200)\n"
    "  --json OUT        a `scaling` report (speedup against grain, a series per worker count)\n";

const char* kMatmulHelp =
    "usage: tilepipe bench ff-matmul [options]\n"
    "  a stream of M x M matrix products through the accelerator (the FastFlow study's Fig. 9)\n"
    "  --m LIST          matrix sides (default 32,64,128)\n"
    "  --workers LIST    worker counts (default 1,2,4,...,CPUs)\n"
    "  --tasks N         products per size (default 2000)\n"
    "  --json OUT        a `scaling` report (GFLOPS against M, a series per worker count, and\n"
    "                    each row's speedup against the products run in turn)\n";

const char* kHomingHelp =
    "usage: tilepipe bench ff-homing [options]\n"
    "  a stream of M x M matrix products through the accelerator, each task's operands and\n"
    "  result allocated for it under a memory policy (the FastFlow study's Fig. 7) and\n"
    "  written by the caller before the clock starts: first_touch (on the caller's node, as\n"
    "  local homing puts them on the allocating tile), local (on the node of the task's\n"
    "  worker: a home per task), interleave (page by page over the workers' nodes: hash-for-home)\n"
    "  --policies LIST   memory policies (default first_touch,local,interleave)\n"
    "  --m LIST          matrix sides (default 32,64,128)\n"
    "  --workers LIST    worker counts (default 1,2,4,...,CPUs)\n"
    "  --tasks N         products per run, each with buffers of its own (default 300)\n"
    "  --json OUT        a `scaling` report (GFLOPS against workers, a series per policy and M)\n";

std::vector<std::string> default_workers() {
    std::vector<std::string> w;
    const unsigned cpus = std::max<unsigned>(1, static_cast<unsigned>(allowed_cpus().size()));
    for (unsigned x = 1; x <= cpus; x *= 2) w.push_back(std::to_string(x));
    if (std::to_string(cpus) != w.back()) w.push_back(std::to_string(cpus));
    return w;
}

}  // namespace

int run_ff_grain(int argc, char** argv) {
    const Args args(argc, argv, {"grain-us", "workers", "work-ms", "json"}, {"help"});
    if (args.has("help")) {
        std::fputs(kGrainHelp, stdout);
        return 0;
    }
    const std::vector<uint64_t> grains = numbers(args, "grain-us", {"1", "10", "100", "1000"});
    const std::vector<uint64_t> workers = numbers(args, "workers", default_workers());
    const double work_s = double(at_least(args, "work-ms", 200, 1)) * 1e-3;
    nlohmann::json rows = nlohmann::json::array();
    const double per_us = rounds_per_us();
    std::printf("%10s %8s %10s %9s\n", "grain us", "workers", "seconds", "speedup");
    for (uint64_t g : grains) {
        std::vector<Spin> tasks(std::max<size_t>(1, size_t(work_s / (double(g) * 1e-6))),
                                Spin{std::max<uint64_t>(1, uint64_t(per_us * double(g))), 0});
        const double t0 = now_s();
        for (Spin& t : tasks) spin(t);
        const double serial = now_s() - t0;
        for (uint64_t w : workers) {
            const double s = through(static_cast<unsigned>(w), tasks, &spin);
            std::printf("%10llu %8llu %10.4f %9.2f\n", static_cast<unsigned long long>(g), static_cast<unsigned long long>(w), s,
                        serial / s);
            rows.push_back({{"series", std::to_string(w) + " workers"}, {"workers", w}, {"grain_us", g},
                            {"tasks", tasks.size()}, {"seconds", s}, {"serial_seconds", serial}, {"speedup", serial / s}});
        }
    }
    write_report(args.str("json", ""), "farm speedup against task grain (accelerator)", "grain_us", "speedup", "speedup",
                 rows);
    return 0;
}

int run_ff_matmul(int argc, char** argv) {
    const Args args(argc, argv, {"m", "workers", "tasks", "json"}, {"help"});
    if (args.has("help")) {
        std::fputs(kMatmulHelp, stdout);
        return 0;
    }
    const std::vector<int> sizes = matrix_sides(args);
    const std::vector<uint64_t> workers = numbers(args, "workers", default_workers());
    const size_t n = at_least(args, "tasks", 2000, 1);
    nlohmann::json rows = nlohmann::json::array();
    std::printf("%6s %8s %10s %9s %9s\n", "M", "workers", "seconds", "GFLOPS", "speedup");
    for (const int m : sizes) {
        const size_t k = kPairs, cells = size_t(m) * m;
        const Operands ops(m);
        const std::vector<float>&a = ops.a, &b = ops.b;
        std::vector<float> c(k * cells);
        std::vector<Product> tasks(n);
        for (size_t i = 0; i < n; ++i)
            tasks[i] = Product{&a[(i % k) * cells], &b[(i % k) * cells], &c[(i % k) * cells], m};
        const double flops = 2.0 * double(m) * m * m * double(n);
        for (size_t i = 0; i < std::min(n, k); ++i) multiply(tasks[i]);  // warm: operands in cache, code paged in
        const double t0 = now_s();
        for (Product& t : tasks) multiply(t);
        const double serial = now_s() - t0;
        for (uint64_t w : workers) {
            // Workers writing the same result matrix at once would race: one result per task.
            std::vector<float> own(n * cells);
            for (size_t i = 0; i < n; ++i) tasks[i].c = &own[i * cells];
            const double s = through(static_cast<unsigned>(w), tasks, &multiply);
            std::printf("%6d %8llu %10.4f %9.3f %9.2f\n", m, static_cast<unsigned long long>(w), s, flops / s / 1e9,
                        serial / s);
            rows.push_back({{"series", std::to_string(w) + " workers"}, {"workers", w}, {"m", m}, {"tasks", n},
                            {"seconds", s}, {"gflops", flops / s / 1e9}, {"speedup", serial / s}});
            for (size_t i = 0; i < n; ++i) tasks[i].c = &c[(i % k) * cells];
        }
    }
    write_report(args.str("json", ""), "matrix products through the accelerator: GFLOPS against M", "m", "gflops",
                 "GFLOPS", rows);
    return 0;
}

int run_ff_homing(int argc, char** argv) {
    const Args args(argc, argv, {"policies", "m", "workers", "tasks", "json"}, {"help"});
    if (args.has("help")) {
        std::fputs(kHomingHelp, stdout);
        return 0;
    }
    const std::vector<std::string> policies = args.list("policies", {"first_touch", "local", "interleave"});
    for (const std::string& p : policies)
        if (!memory_policy_named(p))
            throw std::invalid_argument(args.label("policies") + ": '" + p + "' is not a memory policy (known: " +
                                        memory_policy_names() + ")");
    const std::vector<int> sizes = matrix_sides(args);
    const std::vector<uint64_t> workers = numbers(args, "workers", default_workers());
    const size_t n = at_least(args, "tasks", 300, 1);
    const size_t numa_nodes = host_numa_nodes().size();
    if (numa_nodes == 1)
        std::printf("one NUMA node: every policy puts every page on node 0 (the kernel records the policy; "
                    "only the placement column differs)\n");
    nlohmann::json rows = nlohmann::json::array(), skipped = nlohmann::json::array();
    std::printf("%-12s %6s %8s %10s %9s  %s\n", "policy", "M", "workers", "seconds", "GFLOPS", "buffers placed");
    for (const int m : sizes) {
        const size_t cells = size_t(m) * m, bytes = cells * sizeof(float);
        const Operands ops(m);
        // Each pair's product computed in turn: every result is checked against it.
        std::vector<float> want(kPairs * cells);
        for (size_t i = 0; i < kPairs; ++i) {
            Product p{&ops.a[i * cells], &ops.b[i * cells], &want[i * cells], m};
            multiply(p);
        }
        const double flops = 2.0 * double(m) * m * m * double(n);
        for (const std::string& policy : policies)
            for (uint64_t w : workers) {
                AcceleratorOptions o;
                o.workers = static_cast<unsigned>(w);
                o.collection = ResultOrder::ordered;  // strict turns: task i runs on the worker allocate(.., i) placed for
                o.memory = policy;
                o.name = "ff";
                std::unique_ptr<Accelerator<Product>> acc;
                try {
                    acc = std::make_unique<Accelerator<Product>>(o, [](Product& t) { multiply(t); });
                } catch (const std::invalid_argument& e) {  // e.g. local with floating workers over several nodes
                    std::printf("%-12s %6d %8llu   skipped: %s\n", policy.c_str(), m, static_cast<unsigned long long>(w), e.what());
                    skipped.push_back({{"policy", policy}, {"m", m}, {"workers", w}, {"reason", e.what()}});
                    continue;
                }
                // Every task's operands and result in buffers of its own, written by the
                // caller (the farm's emitter) before the clock starts, as the study's were.
                std::vector<AcceleratorBuffer> buffers;
                std::vector<Product> tasks(n);
                for (size_t i = 0; i < n; ++i) {
                    for (int k = 0; k < 3; ++k) buffers.push_back(acc->allocate(bytes, i));
                    float* a = buffers[3 * i].as<float>();
                    float* b = buffers[3 * i + 1].as<float>();
                    float* c = buffers[3 * i + 2].as<float>();
                    std::copy_n(&ops.a[(i % kPairs) * cells], cells, a);
                    std::copy_n(&ops.b[(i % kPairs) * cells], cells, b);
                    std::fill_n(c, cells, 0.0f);
                    tasks[i] = Product{a, b, c, m};
                }
                const double s = stream(*acc, tasks);
                for (size_t i = 0; i < n; ++i)
                    if (std::memcmp(tasks[i].c, &want[(i % kPairs) * cells], bytes) != 0)
                        throw std::runtime_error("task " + std::to_string(i) + "'s product differs from the one computed in turn");
                std::vector<std::string> places;  // each worker's, where they differ (local over several nodes)
                for (uint64_t i = 0; i < w; ++i)
                    if (std::find(places.begin(), places.end(), acc->placement(i)) == places.end())
                        places.push_back(acc->placement(i));
                std::string placed = places.front();
                for (size_t i = 1; i < places.size(); ++i) placed += " / " + places[i];
                std::printf("%-12s %6d %8llu %10.4f %9.3f  %s\n", policy.c_str(), m, static_cast<unsigned long long>(w), s,
                            flops / s / 1e9, placed.c_str());
                rows.push_back({{"series", policy + ", M=" + std::to_string(m)}, {"policy", policy}, {"placement", placed},
                                {"workers", w}, {"m", m}, {"tasks", n}, {"seconds", s}, {"gflops", flops / s / 1e9}});
            }
    }
    write_report(args.str("json", ""), "matrix products under memory policies: GFLOPS against workers", "workers", "gflops",
                 "GFLOPS", rows, {{"numa_nodes", numa_nodes}, {"skipped", skipped}});
    return 0;
}

}  // namespace tp::bench
