// bench mapvec: the paper's map application (Buono & Mencagli, Tables IV and V). A stream of N
// M x M matrices (int32, or float), each multiplied by one constant vector b. The emitter
// multicasts each task's reference (its index, a 64-bit word) to W workers, linearly or down
// the binary tree (framework/patterns/tree_multicast.hpp); worker w computes its block of rows
// (framework/patterns/partition.hpp) into the task's result vector and sends a partial-done
// word to the collector through an asymmetric interface; the collector (MapCollector)
// completes the task when all W partials arrived and frees the task's buffers for the emitter.
// Before its first timed run, each case runs once untimed with the collector checking every
// result vector against the sequential product, so T_S leaves the checks out.
//
// Memory: `window` tasks are in flight at most; each has one matrix buffer and one result
// buffer, allocated and filled before the clock starts (the N tasks cycle over these `window`
// distinct matrices). The result vector is laid out with each worker's block starting on its
// own cache line (`--layout padded`, the default) so workers never write the same line;
// `--layout packed` keeps it contiguous, for comparison. After checking a result the
// collector overwrites it with the bitwise complement of the expected values, so a row a
// worker failed to write shows up as a mismatch the next time the buffer is used.
//
// T_S, the service time, is the average time between two successive completions at the
// collector over the steady state (the middle 80% of the tasks); B_W = (1 / T_S) x M^2 x 4
// bytes x 8 in Gb/s; scalability = T_S(1) / T_S(W) within the same variant, M and dtype, and
// vs_sm_tree = T_S / T_S(sm_tree) at the same M, dtype and W, each the median over repetitions
// of the ratio within one repetition (cases that are compared run back to back).
// Threads (emitter, W workers, collector) are pinned round-robin over the CPUs; every wait
// (a worker for its input, the collector for partials, the emitter for a free buffer, a
// sender for room) goes through one WaitPolicy (spin, yield, park on the thread's doorbell),
// so runs with more threads than CPUs progress. With more threads than CPUs the policy spins
// briefly and yields twice before parking (see policy_for). As in the paper, references move
// one at a time by default; `--burst` moves what is waiting in bursts and `--refill` lets the
// emitter wait for several free buffers at once, both to study batching.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/bench/bench_mapvec_net.hpp"
#include "apps/bench/benches.hpp"
#include "apps/bench/peer_channels.hpp"
#include "apps/bench/harness.hpp"
#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/channel/transport_lock_gather.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/patterns/map_collector.hpp"
#include "framework/patterns/partition.hpp"
#include "framework/patterns/tree_multicast.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

}  // namespace

WordChannelFactory& fastflow_channel() {
    static WordChannelFactory factory = nullptr;
    return factory;
}

namespace {

const char* kMapvecHelp =
    "usage: tilepipe bench mapvec [options]\n"
    "The paper's map: a stream of M x M matrices times one vector b, split by rows over W workers;\n"
    "the emitter multicasts each task (linear or tree), a collector completes it when all W\n"
    "partials arrived. Reports T_S (service time), B_W and scalability T_S(1)/T_S(W).\n"
    "  --variants LIST    udn_tree (one messaging network, asymmetric gather), sm_tree, sm_linear,\n"
    "                     ring_tree, lock_queue, lck_queue (mutexes and condition variables,\n"
    "                     blocking waits, one shared gather queue: the paper's), udn_pair_tree (a\n"
    "                     private network per link), fastflow_tree (FastFlow's SPSC buffer; tilepipe-bench\n"
    "                     only) (default: udn_tree, sm_tree, sm_linear, ring_tree, lck_queue)\n"
    "  --m LIST           matrix sizes (default 56,112,168)\n"
    "  --workers LIST     worker counts, each 1..256 (default 1,2,4,8,16)\n"
    "  --dtype LIST       int and/or float (default int)\n"
    "  --tasks N          matrices per measurement, at least 20 (default 50000)\n"
    "  --window N         tasks in flight, each with its own matrix and result buffers (default 128)\n"
    "  --refill N         when every buffer is in use, the emitter waits until N are free (default 1)\n"
    "  --burst N          most task references moved per receive and forward (default 1: one at a time)\n"
    "  --capacity K       slots per channel, a power of two (default 128; below --window senders may\n"
    "                     wait for room, and on udn below --window + K/4 - 1)\n"
    "  --grain N          extra dependent integer operations per row computed (default 0): a coarser\n"
    "                     grain with the same memory traffic, for the shape of the paper's Table V\n"
    "  --layout L         result vector: padded (each worker's rows on their own lines) or packed\n"
    "                     (default padded)\n"
    "  --cpus LIST        CPUs for the threads, round-robin: emitter, workers, collector (default:\n"
    "                     every allowed CPU)\n"
    "  --spin N           WaitPolicy spin rounds (default: 32 with more threads than CPUs, else the\n"
    "                     policy's default)\n"
    "  --yield N          WaitPolicy yield rounds (default: 2 with more threads than CPUs, else the\n"
    "                     policy's default)\n"
    "  --park-us N        WaitPolicy park timeout in microseconds (default: the policy's default)\n"
    "  --reps N           repetitions of each measurement, interleaved (default 5)\n"
    "  --json OUT         also write {\"bench\": \"mapvec\", \"rows\": [...]} to OUT\n"
    "  --config FILE      read options from a YAML file (conf/mapvec.yaml); the command line wins\n"
    "  --help             this text\n";

struct Variant {
    std::string name;
    std::string transport;
    Multicast mode;
    bool network = false;  // every link on one messaging network, gathered by the asymmetric interface
    bool peer = false;      // fastflow_tree: a peer library's SPSC queue (peer_channels.hpp)
    bool blocking = false;  // lck_queue: mutex + condition variable queues, one shared gather queue,
                            // every wait a condition variable wait (no spinning, no doorbells)
};

// The paper's variants; `udn_tree` only when the `udn` transport is built in.
std::vector<Variant> available_variants() {
    std::vector<Variant> v{{"sm_tree", "sm", Multicast::tree},
                           {"sm_linear", "sm", Multicast::linear},
                           {"ring_tree", "ring", Multicast::tree},
                           {"lock_queue", "lock", Multicast::tree},
                           {"lck_queue", "lock", Multicast::tree, false, false, true}};
    const auto& t = transport_names();
    if (std::find(t.begin(), t.end(), "udn") != t.end()) {
        v.insert(v.begin(), {"udn_tree", "udn", Multicast::tree, true});
        v.push_back({"udn_pair_tree", "udn_pair", Multicast::tree});  // a private network per link, N-way scan
    }
    if (fastflow_channel() != nullptr) v.push_back({"fastflow_tree", "fastflow", Multicast::tree, false, true, false});
    return v;
}

struct Options {
    uint64_t tasks = 50000;
    uint32_t window = 128;
    uint32_t refill = 1;
    uint32_t burst = 1;
    uint32_t capacity = 128;
    uint32_t grain = 0;  // extra dependent operations per row (Table V's coarser grain)
    bool padded = true;
    std::vector<int> cpus;
    int64_t spin = -1, yield = -1;  // -1: chosen by policy_for
    int64_t park_us = -1;           // -1: the policy's default
};

// The wait policy of a run with `threads` threads on `cpus` CPUs. With more threads than CPUs
// a waiter spins briefly and yields only twice before parking: a longer yield phase keeps
// idle waiters runnable, and they hand the CPU to one another instead of to the thread with
// work (measured on 2 CPUs: with the default 16 yields T_S grows 3-4x at W = 8..16).
WaitPolicy policy_for(uint32_t threads, const Options& o) {
    WaitPolicy p;
    const bool crowded = threads > o.cpus.size();
    if (crowded) {
        p.spin_rounds = 32;
        p.yield_rounds = 2;
    }
    if (o.spin >= 0) p.spin_rounds = static_cast<uint32_t>(o.spin);
    if (o.yield >= 0) p.yield_rounds = static_cast<uint32_t>(o.yield);
    if (o.park_us >= 0) p.park_timeout = std::chrono::microseconds(o.park_us);
    return p;
}

constexpr uint32_t kLine = 64;
constexpr uint32_t kMaxBurst = 64;

template <typename T>
struct Aligned {
    void operator()(T* p) const { std::free(p); }
};
template <typename T>
std::unique_ptr<T[], Aligned<T>> alloc_lines(size_t n) {
    const size_t bytes = (n * sizeof(T) + kLine - 1) / kLine * kLine;
    T* p = static_cast<T*>(std::aligned_alloc(kLine, bytes == 0 ? kLine : bytes));
    if (p == nullptr) throw std::bad_alloc();
    return std::unique_ptr<T[], Aligned<T>>(p);
}

// rows x m block of a row-major matrix times b; workers and the sequential reference both call
// this, so the reference is computed the same way.
// `grain` dependent integer operations per row on top (the compiler may not fold them): work
// that touches no memory, so a coarser grain keeps the cache misses, as the paper's
// software-emulated floats did.
template <typename T>
[[gnu::noinline]] void multiply_rows(const T* a, const T* b, T* out, uint32_t rows, uint32_t m, uint32_t grain = 0) {
    for (uint32_t r = 0; r < rows; ++r) {
        const T* row = a + static_cast<size_t>(r) * m;
        T acc = 0;
        for (uint32_t k = 0; k < m; ++k) acc += row[k] * b[k];
        uint32_t x = r;
        for (uint32_t g = 0; g < grain; ++g) {
            x = x * 1664525u + 1013904223u;
            asm volatile("" : "+r"(x));
        }
        out[r] = acc;
    }
}

// The workers' data: `window` matrices and result vectors, b, and the expected products.
// Element values are small integers, so float sums are exact in any order.
template <typename T>
class MapVecData {
public:
    MapVecData(uint32_t m, uint32_t window, uint32_t workers, bool padded)
        : m_(m), window_(window), b_(alloc_lines<T>(m)), offsets_(workers) {
        static_assert(sizeof(T) == 4);
        const uint32_t per_line = kLine / sizeof(T);
        uint32_t off = 0;
        for (uint32_t w = 0; w < workers; ++w) {
            const Block rows = block_of(w, workers, m);
            offsets_[w] = padded ? off : rows.begin;
            off += padded ? (rows.count + per_line - 1) / per_line * per_line : rows.count;
        }
        result_stride_ = (off + per_line - 1) / per_line * per_line;
        matrix_stride_ = (static_cast<size_t>(m) * m + per_line - 1) / per_line * per_line;
        matrices_ = alloc_lines<T>(matrix_stride_ * window);
        results_ = alloc_lines<T>(result_stride_ * window);
        expected_ = alloc_lines<T>(static_cast<size_t>(m) * window);
        for (uint32_t k = 0; k < m; ++k) b_[k] = static_cast<T>(static_cast<int>(k % 9) - 4);
        for (uint32_t s = 0; s < window; ++s) {
            T* a = matrix(s);
            for (uint32_t r = 0; r < m; ++r)
                for (uint32_t k = 0; k < m; ++k)
                    a[static_cast<size_t>(r) * m + k] = static_cast<T>(static_cast<int>((s * 131 + r * 31 + k * 7) % 15) - 7);
            multiply_rows(a, b(), expected(s), m, m);
            poison(s, workers);
        }
    }

    uint32_t m() const { return m_; }
    const T* b() const { return b_.get(); }
    T* matrix(uint32_t slot) { return matrices_.get() + matrix_stride_ * slot; }
    T* result(uint32_t slot) { return results_.get() + result_stride_ * slot; }
    T* expected(uint32_t slot) { return expected_.get() + static_cast<size_t>(m_) * slot; }
    // Where worker w writes its first row in a result vector.
    uint32_t offset(uint32_t w) const { return offsets_[w]; }

    // Worker w's part of task `slot`.
    void compute(uint32_t slot, uint32_t w, uint32_t workers, uint32_t grain) {
        const Block rows = block_of(w, workers, m_);
        multiply_rows(matrix(slot) + static_cast<size_t>(rows.begin) * m_, b(), result(slot) + offsets_[w], rows.count, m_,
                      grain);
    }

    // Compares the result of `slot` with the sequential product; returns the first wrong row
    // (and its value in `got`), or m when all are right.
    uint32_t check(uint32_t slot, uint32_t workers, T& got) {
        for (uint32_t w = 0; w < workers; ++w) {
            const Block rows = block_of(w, workers, m_);
            const T* r = result(slot) + offsets_[w];
            const T* e = expected(slot) + rows.begin;
            if (std::memcmp(r, e, rows.count * sizeof(T)) == 0) continue;
            for (uint32_t i = 0; i < rows.count; ++i)
                if (std::memcmp(&r[i], &e[i], sizeof(T)) != 0) {
                    got = r[i];
                    return rows.begin + i;
                }
        }
        return m_;
    }

    // Overwrites the result of `slot` with values that differ from the expected ones in every bit.
    void poison(uint32_t slot, uint32_t workers) {
        for (uint32_t w = 0; w < workers; ++w) {
            const Block rows = block_of(w, workers, m_);
            T* r = result(slot) + offsets_[w];
            const T* e = expected(slot) + rows.begin;
            for (uint32_t i = 0; i < rows.count; ++i) r[i] = std::bit_cast<T>(~std::bit_cast<uint32_t>(e[i]));
        }
    }

private:
    uint32_t m_, window_;
    std::unique_ptr<T[], Aligned<T>> b_;
    std::vector<uint32_t> offsets_;
    size_t result_stride_ = 0, matrix_stride_ = 0;
    std::unique_ptr<T[], Aligned<T>> matrices_, results_, expected_;
};

struct Measurement {
    double ts_ns = 0;
    uint64_t mismatches = 0;
    std::string first_mismatch;
};

// How the collector tells the emitter that buffers are free again. The emitter publishes in
// `wake_at` the completion count it waits for before parking; the collector rings it only
// once that count is reached, so a parked emitter is woken once per refill, not once per task.
struct Progress {
    alignas(kLine) std::atomic<uint64_t> completed{0};  // written by the collector
    alignas(kLine) std::atomic<uint64_t> wake_at{0};    // written by the emitter
};

// `check`: the collector compares every result with the sequential product (and poisons it
// for the buffer's next use); the timed runs leave that out, so T_S is the map's alone.
template <typename T>
Measurement measure(const Variant& v, uint32_t m, uint32_t workers, const Options& o, bool check) {
    const ChannelSpec spec{v.transport, o.capacity, -1};
    MapVecData<T> data(m, o.window, workers, o.padded);
    // udn_tree: every link on one network (declared first: it outlives the channels).
    MapOnNetwork on_network;
    std::unique_ptr<MulticastNetwork> multicast;
    std::unique_ptr<AsymmetricReceiver<uint64_t>> gather;
    if (v.network) {
        on_network = map_on_network(workers, v.mode, o.capacity);
        multicast = std::make_unique<MulticastNetwork>(std::move(on_network.inputs), v.mode);
        gather = std::make_unique<AsymmetricReceiver<uint64_t>>(std::move(on_network.partials));
    } else if (v.peer) {  // the peer's queue everywhere: W tree inputs, W partials scanned
        std::vector<std::unique_ptr<Channel<uint64_t>>> inputs, out;
        for (uint32_t w = 0; w < workers; ++w) inputs.push_back(fastflow_channel()(o.capacity));
        for (uint32_t w = 0; w < workers; ++w) out.push_back(fastflow_channel()(o.capacity));
        multicast = std::make_unique<MulticastNetwork>(std::move(inputs), v.mode);
        gather = std::make_unique<AsymmetricReceiver<uint64_t>>(std::move(out));
    } else if (v.blocking) {
        multicast = std::make_unique<MulticastNetwork>(spec, workers, v.mode);
        gather = std::make_unique<AsymmetricReceiver<uint64_t>>(locked_gather<uint64_t>(o.capacity * workers, workers));
    } else {
        multicast = std::make_unique<MulticastNetwork>(spec, workers, v.mode);
        gather = std::make_unique<AsymmetricReceiver<uint64_t>>(spec, workers);
    }
    MulticastNetwork& net = *multicast;
    AsymmetricReceiver<uint64_t>& partials = *gather;
    uint32_t capacity = UINT32_MAX;  // the smallest K (a network lowers it to what its queues hold)
    for (uint32_t w = 0; w < workers; ++w)
        capacity = std::min({capacity, net.input(w).capacity(), partials.sender(w).capacity()});
    // Doorbells: each thread parks on its own. Receivers are rung after every send. Senders
    // wait for room only when a channel can hold fewer than `window` items (at most `window`
    // tasks, hence references and partials, are in flight); otherwise their bells are left
    // unset, which spares every receive a doorbell fence.
    std::vector<Doorbell> bells(workers + 2);  // emitter, workers..., collector
    std::vector<Doorbell*> worker_bells;
    for (uint32_t w = 0; w < workers; ++w) worker_bells.push_back(&bells[1 + w]);
    // On the network, senders ring with no fence: each sleeper orders its own park
    // (Doorbell::ring_light), so a send one reference at a time costs no barrier.
    if (v.network)
        for (Doorbell& b : bells) b.make_light();
    Doorbell& emitter_bell = bells[0];
    Doorbell& collector_bell = bells[workers + 1];
    // A credit interface returns credits a batch at a time, so its senders can count on only
    // K - batch + 1 in flight beyond what the receiver has taken (noc::credit_batch).
    const bool credited = v.network || v.transport == "udn_pair";
    const uint32_t sure = credited ? capacity - noc::credit_batch(capacity) + 1 : capacity;
    const bool senders_wait = sure < o.window;
    if (v.blocking) {
        // Every wait sleeps on a queue's condition variable: no doorbells.
    } else if (senders_wait) {
        net.set_doorbells(&emitter_bell, worker_bells);
    } else {
        net.set_doorbells(nullptr, worker_bells);
        for (uint32_t w = 0; w < workers; ++w) net.input(w).set_bells(nullptr, worker_bells[w]);
    }
    if (!v.blocking) {
        partials.set_receiver_bell(&collector_bell);
        for (uint32_t w = 0; w < workers; ++w)
            partials.sender(w).set_bells(senders_wait ? worker_bells[w] : nullptr, &collector_bell);
    }

    WaitPolicy policy = policy_for(workers + 2, o);
    if (v.blocking) policy.spin_rounds = policy.yield_rounds = 0;  // blocking waits, as pthreads code waits
    const uint64_t tasks = o.tasks;
    const uint32_t window = o.window;
    const uint32_t refill = o.refill;
    const uint32_t burst = o.burst;
    auto cpu = [&](uint32_t thread) { return o.cpus[thread % o.cpus.size()]; };
    std::vector<uint64_t> stamps(tasks);
    Progress progress;
    Measurement r;
    std::atomic<uint32_t> started{0};
    auto start_line = [&] {  // every thread pinned before the first task
        started.fetch_add(1);
        policy.wait([&] { return started.load() == workers + 2; }, [&](auto& attempt) {
            nap(policy.nap_without_bell);
            return attempt();
        });
    };

    std::vector<std::thread> threads;
    threads.emplace_back([&] {
        pin(cpu(0));
        name_current_thread("map-emitter");
        MulticastPort port = net.emitter_port();
        start_line();
        uint64_t free_until = window;  // tasks below this have free buffers
        uint64_t refs[kMaxBurst];
        for (uint64_t t = 0; t < tasks;) {
            // Task t reuses the buffers of task t - window. When none is free, wait until
            // `refill` are.
            if (t == free_until) {
                const uint64_t need = t - window + refill;  // completions that free `refill` buffers
                progress.wake_at.store(need, std::memory_order_relaxed);  // ordered by park_on's fence
                policy.wait([&] { return progress.completed.load(std::memory_order_acquire) >= need; },
                            [&](auto& attempt) { return park_on(&emitter_bell, policy, attempt); });
                free_until = progress.completed.load(std::memory_order_acquire) + window;
            }
            const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({burst, free_until - t, tasks - t}));
            for (uint32_t i = 0; i < n; ++i) refs[i] = t + i;
            port.forward_burst(refs, n, policy);
            t += n;
        }
        port.close();
    });
    for (uint32_t w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            pin(cpu(1 + w));
            name_current_thread("map-worker");
            MulticastPort port = net.worker_port(w);
            Channel<uint64_t>& out = partials.sender(w);
            start_line();
            uint64_t refs[kMaxBurst];
            uint32_t n;
            while ((n = port.recv_and_forward_burst(refs, burst, policy)) != 0) {  // children first
                for (uint32_t i = 0; i < n; ++i) data.compute(static_cast<uint32_t>(refs[i] % window), w, workers, o.grain);
                send_burst(out, refs, n, policy);  // the partials: each task's id
            }
            out.close();
        });
    threads.emplace_back([&] {
        pin(cpu(workers + 1));
        name_current_thread("map-collector");
        MapCollector collector(partials, window);
        start_line();
        uint64_t task;
        // A broken invariant in the collector (a partial for the wrong task, end of stream with
        // tasks incomplete) leaves the emitter and workers waiting on it: the benchmark stops
        // with the collector's error and exit status 1, not with std::terminate.
        auto next = [&] {
            try {
                return collector.next(task, policy);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "tilepipe bench mapvec: the collector failed: %s\n", e.what());
                std::fflush(stderr);
                std::_Exit(1);
            }
        };
        while (next()) {
            stamps[task] = ticks();
            if (check) {
                const uint32_t slot = static_cast<uint32_t>(task % window);
                T got{};
                const uint32_t row = data.check(slot, workers, got);
                if (row != m && r.mismatches++ == 0)
                    r.first_mismatch = "task " + std::to_string(task) + " row " + std::to_string(row) + ": got " +
                                       std::to_string(got) + ", sequential " + std::to_string(data.expected(slot)[row]);
                data.poison(slot, workers);
            }
            const uint64_t done = collector.completed();
            progress.completed.store(done, std::memory_order_release);
            // seq_cst: the store above before reading wake_at, against the emitter's
            // store of wake_at before its re-check (Dekker, as in Doorbell).
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (done >= progress.wake_at.load(std::memory_order_relaxed)) emitter_bell.ring();
        }
        if (collector.completed() != tasks && r.mismatches++ == 0)
            r.first_mismatch = std::to_string(collector.completed()) + " of " + std::to_string(tasks) + " tasks completed";
    });
    for (auto& t : threads) t.join();

    const uint64_t lo = tasks / 10, hi = tasks - 1 - tasks / 10;  // steady state
    r.ts_ns = static_cast<double>(stamps[hi] - stamps[lo]) / static_cast<double>(hi - lo) / ticks_per_ns();
    return r;
}

struct MapvecCase {
    Variant variant;
    uint32_t m;
    std::string dtype;
    uint32_t workers;
};

std::vector<uint32_t> parse_counts(const Args& args, const std::string& name, const std::vector<std::string>& fallback,
                                   uint32_t lo, uint32_t hi) {
    std::vector<uint32_t> out;
    for (const auto& s : args.list(name, fallback)) {
        size_t used = 0;
        unsigned long v = 0;
        try {
            v = std::stoul(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size() || v < lo || v > hi)
            throw std::invalid_argument(args.label(name) + ": each value is " + std::to_string(lo) + ".." + std::to_string(hi) +
                                        ", got '" + s + "'");
        out.push_back(static_cast<uint32_t>(v));
    }
    if (out.empty()) throw std::invalid_argument(args.label(name) + " needs at least one value");
    return out;
}

}  // namespace

int run_mapvec(int argc, char** argv) {
    const Args args(argc, argv,
                    {"reps", "json", "variants", "m", "workers", "dtype", "tasks", "window", "refill", "burst", "capacity", "layout", "park-us",
                     "cpus", "spin", "yield", "grain"},
                    {"help"});
    if (args.has("help")) {
        std::printf("%s", kMapvecHelp);
        return 0;
    }
    const unsigned requested = static_cast<unsigned>(std::min<uint64_t>(at_least(args, "reps", 5, 1), 1000000));
    const std::string json = args.str("json", "");
    Options o;
    o.tasks = args.num("tasks", o.tasks);
    if (o.tasks < 20) throw std::invalid_argument("--tasks must be at least 20");
    o.window = static_cast<uint32_t>(args.num("window", o.window));
    if (o.window == 0) throw std::invalid_argument("--window must be at least 1");
    o.refill = static_cast<uint32_t>(args.num("refill", o.refill));
    if (o.refill == 0 || o.refill > o.window) throw std::invalid_argument("--refill must be 1..window");
    o.burst = static_cast<uint32_t>(args.num("burst", o.burst));
    if (o.burst == 0 || o.burst > kMaxBurst)
        throw std::invalid_argument("--burst must be 1.." + std::to_string(kMaxBurst));
    o.capacity = static_cast<uint32_t>(args.num("capacity", o.capacity));
    o.grain = static_cast<uint32_t>(std::min<uint64_t>(args.num("grain", o.grain), 1u << 24));
    const std::string layout = args.str("layout", "padded");
    if (layout != "padded" && layout != "packed")
        throw std::invalid_argument("--layout is padded or packed, got '" + layout + "'");
    o.padded = layout == "padded";
    if (args.has("spin")) o.spin = static_cast<int64_t>(std::min<uint64_t>(args.num("spin", 0), UINT32_MAX));
    if (args.has("park-us")) o.park_us = static_cast<int64_t>(std::min<uint64_t>(args.num("park-us", 0), 1000000));
    if (args.has("yield")) o.yield = static_cast<int64_t>(std::min<uint64_t>(args.num("yield", 0), UINT32_MAX));
    if (args.has("cpus")) {
        const std::vector<int> allowed = allowed_cpus();
        for (const auto& c : args.list("cpus", {})) o.cpus.push_back(allowed_cpu(c, args.label("cpus"), allowed));
        if (o.cpus.empty()) throw std::invalid_argument(args.label("cpus") + " needs at least one CPU");
    } else {
        o.cpus = allowed_cpus();
    }

    const std::vector<Variant> available = available_variants();
    std::vector<Variant> variants;
    for (const auto& name : args.list("variants", {"udn_tree", "sm_tree", "sm_linear", "ring_tree", "lck_queue"})) {
        auto it = std::find_if(available.begin(), available.end(), [&](const Variant& v) { return v.name == name; });
        if (it != available.end()) {
            variants.push_back(*it);
        } else if (name == "udn_tree") {
            std::fprintf(stderr, "bench mapvec: skipping udn_tree: this build has no `udn` transport\n");
        } else if (name == "fastflow_tree") {
            std::fprintf(stderr, "bench mapvec: skipping fastflow_tree: run tilepipe-bench built beside FastFlow's "
                                 "headers (../shared/third_party/fastflow)\n");
        } else {
            std::string known;
            for (const auto& v : available) known += (known.empty() ? "" : ", ") + v.name;
            throw std::invalid_argument(args.label("variants") + ": unknown variant '" + name + "' (known: " + known + ")");
        }
    }
    const auto ms = parse_counts(args, "m", {"56", "112", "168"}, 1, 4096);
    const auto worker_counts = parse_counts(args, "workers", {"1", "2", "4", "8", "16"}, 1,
                                            AsymmetricReceiver<uint64_t>::kMaxSenders);
    const auto dtypes = args.list("dtype", {"int"});
    for (const auto& d : dtypes)
        if (d != "int" && d != "float") throw std::invalid_argument(args.label("dtype") + " is int or float, got '" + d + "'");
    if (variants.empty()) throw std::invalid_argument("no variant to measure");

    // Cases of the same M, dtype and worker count run back to back in every repetition, so
    // the per-repetition ratios below compare measurements taken moments apart.
    std::vector<MapvecCase> cases;
    for (uint32_t m : ms)
        for (const auto& d : dtypes)
            for (uint32_t w : worker_counts)
                for (const auto& v : variants) cases.push_back({v, m, d, w});
    std::vector<std::vector<double>> ts(cases.size());
    uint64_t mismatches = 0;
    std::string first_mismatch;
    const unsigned reps = interleave(requested, cases.size(), [&](size_t k, unsigned rep) {
        const MapvecCase& c = cases[k];
        auto run = [&](bool check) {
            return c.dtype == "int" ? measure<int32_t>(c.variant, c.m, c.workers, o, check)
                                    : measure<float>(c.variant, c.m, c.workers, o, check);
        };
        // Before a case's first timed run, an untimed one checks every result.
        const Measurement r = rep == 0 ? run(true) : Measurement{};
        ts[k].push_back(run(false).ts_ns / 1000);
        if (r.mismatches != 0 && mismatches == 0)
            first_mismatch = c.variant.name + " M=" + std::to_string(c.m) + " " + c.dtype + " W=" +
                             std::to_string(c.workers) + ": " + r.first_mismatch;
        mismatches += r.mismatches;
        if (mismatches != 0)
            throw std::runtime_error("result vector differs from the sequential product (" + first_mismatch + ")");
    });
    if (reps == 0) return finish("mapvec", 0, requested);
    keep_reps(ts, reps);

    // The case of `variant` with c's M and dtype and `workers` workers, or -1.
    auto find = [&](const std::string& variant, const MapvecCase& c, uint32_t workers) -> ptrdiff_t {
        for (size_t j = 0; j < cases.size(); ++j)
            if (cases[j].variant.name == variant && cases[j].m == c.m && cases[j].dtype == c.dtype &&
                cases[j].workers == workers)
                return static_cast<ptrdiff_t>(j);
        return -1;
    };
    // Median over repetitions of ts[num][r] / ts[den][r].
    auto ratio = [&](size_t num, size_t den) {
        std::vector<double> v;
        for (unsigned r = 0; r < reps; ++r) v.push_back(ts[num][r] / ts[den][r]);
        return summarize(v).median;
    };
    std::vector<size_t> order(cases.size());  // rows by variant, then M, dtype, workers
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        auto rank = [&](size_t k) {
            return std::find_if(variants.begin(), variants.end(),
                                [&](const Variant& v) { return v.name == cases[k].variant.name; }) -
                   variants.begin();
        };
        return rank(x) < rank(y);
    });
    std::vector<nlohmann::json> rows;
    for (size_t k : order) {
        const MapvecCase& c = cases[k];
        const Summary s = summarize(ts[k]);
        nlohmann::json row{{"variant", c.variant.name},
                           {"transport", c.variant.transport},
                           {"multicast", multicast_name(c.variant.mode)},
                           {"m", c.m},
                           {"dtype", c.dtype},
                           {"workers", c.workers},
                           {"ts_us", s.median},
                           {"ts_us_min", s.min},
                           {"ts_us_max", s.max},
                           {"bw_gbps", 1e6 / s.median * c.m * c.m * 4.0 * 8.0 / 1e9},
                           {"tasks", o.tasks},
                           {"grain", o.grain},
                           {"spin", c.variant.blocking ? 0u : policy_for(c.workers + 2, o).spin_rounds},
                           {"yield", c.variant.blocking ? 0u : policy_for(c.workers + 2, o).yield_rounds},
                           {"reps", reps}};
        if (const ptrdiff_t one = find(c.variant.name, c, 1); one >= 0)
            row["scalability"] = ratio(static_cast<size_t>(one), k);  // T_S(1) / T_S(W)
        if (const ptrdiff_t ref = find("sm_tree", c, c.workers); ref >= 0)
            row["vs_sm_tree"] = ratio(k, static_cast<size_t>(ref));  // T_S / T_S of sm_tree
        rows.push_back(std::move(row));
    }
    char title[320];
    std::snprintf(title, sizeof(title),
                  "mapvec: M x M matrix times vector, %llu tasks, window %u, refill %u, burst %u, K=%u, %s layout, "
                  "%zu CPUs, %u reps (medians of reps; ratios are medians of per-rep ratios; T_S over the middle "
                  "80%% of completions; waits: spin %u / yield %u, with more threads than CPUs spin %u / yield %u)",
                  static_cast<unsigned long long>(o.tasks), o.window, o.refill, o.burst, o.capacity, layout.c_str(),
                  o.cpus.size(), reps, policy_for(1, o).spin_rounds, policy_for(1, o).yield_rounds,
                  policy_for(static_cast<uint32_t>(o.cpus.size()) + 1, o).spin_rounds,
                  policy_for(static_cast<uint32_t>(o.cpus.size()) + 1, o).yield_rounds);
    print_table(title, rows,
                {{"variant", "/variant"},
                 {"m", "/m"},
                 {"dtype", "/dtype"},
                 {"workers", "/workers"},
                 {"ts_us", "/ts_us", 2},
                 {"min", "/ts_us_min", 2},
                 {"max", "/ts_us_max", 2},
                 {"bw_gbps", "/bw_gbps", 2},
                 {"scalability", "/scalability", 2},
                 {"vs_sm_tree", "/vs_sm_tree", 2}});
    // Table IV's summary: per variant, M and dtype, the worker count with the lowest T_S.
    std::vector<nlohmann::json> best;
    for (const nlohmann::json& row : rows) {
        auto same = [&](const nlohmann::json& b) {
            return b["variant"] == row["variant"] && b["m"] == row["m"] && b["dtype"] == row["dtype"];
        };
        auto it = std::find_if(best.begin(), best.end(), same);
        if (it == best.end()) best.push_back(row);
        else if (row["ts_us"].get<double>() < (*it)["ts_us"].get<double>()) *it = row;
    }
    print_table("mapvec: best over W (the lowest T_S of each variant, M and dtype)", best,
                {{"variant", "/variant"},
                 {"m", "/m"},
                 {"dtype", "/dtype"},
                 {"best_w", "/workers"},
                 {"ts_us", "/ts_us", 2},
                 {"bw_gbps", "/bw_gbps", 2},
                 {"scalability", "/scalability", 2}});
    for (nlohmann::json& b : best) b["best_over_w"] = true;
    std::vector<nlohmann::json> all = rows;
    all.insert(all.end(), best.begin(), best.end());
    write_json(json, "mapvec", all);
    return finish("mapvec", reps, requested);
}

}  // namespace tp::bench
