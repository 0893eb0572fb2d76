/// @file
/// Accelerator mode: a running farm whose source is the caller's thread.
///
/// The caller offloads tasks (`offload`, `try_offload`) into a farm of worker threads that
/// apply one function to each, and reads the results back (`get_result`, `try_get_result`),
/// as with a FastFlow farm built with an input channel (`run_then_freeze`, `offload`,
/// `load_result`, `offload(EOS)`, `wait`). The caller's thread is both the farm's emitter and
/// its collector: no extra threads sit between it and the workers.
///
/// Promises:
///  - Every offloaded task is processed exactly once, by one worker. With
///    `ResultOrder::ordered` results come back in offload order; with `unordered` in the order
///    they are finished (per worker, in offload order).
///  - Blocking calls wait by spinning briefly, then yielding, then sleeping on a futex the
///    other side rings: a run with more threads than CPUs keeps progressing.
///  - `offload` never deadlocks against results the caller has not read yet: while it waits for
///    room it moves finished results into a caller-side queue that `get_result` reads first
///    (the role of FastFlow's unbounded collector queue).
///  - Errors, not hangs: offloading after `end_of_stream()`, a blocking `get_result` that could
///    only wait forever (nothing in flight and no end of stream), and any call after a worker
///    threw raise AcceleratorError; after the last result `get_result` returns false.
///
/// Memory: `allocate(bytes, task)` gives a task buffers of their own placed on NUMA nodes by
/// AcceleratorOptions::memory (first touch, its worker's node, or interleaved), the
/// accelerator's counterpart of FastFlow's allocator and of the TILEPro64's homing policies.
///
/// Thread-safety: one caller thread drives an accelerator (offload, get_result, wait); the
/// worker function runs on the worker threads, one task at a time per worker; allocate() and
/// placement() may be called from any thread.
///
/// Memory orders: a task's fields are written before its slot index is published on the
/// worker's channel (a release store), and the worker reads them after the matching acquire;
/// a result travels back the same way. The caller may therefore use plain, non-atomic structs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tp {

namespace detail {
class AcceleratorMemory;
}

/// How tasks are handed to the workers.
enum class TaskDispatch {
    round_robin,  ///< to the workers in turn, passing over one that has no room (FastFlow's default);
                  ///< a turn is one task, or up to 32 while the caller streams tasks of 0.5 us
                  ///< or more faster than it can hand them out singly (results then come back
                  ///< in bursts); with ResultOrder::ordered, strict turns of one task each
                  ///< (waits for that worker: task n runs on worker n % workers)
    on_demand,    ///< each task goes to the worker with the fewest tasks outstanding
};

/// In which order results come back.
enum class ResultOrder {
    unordered,  ///< as the workers finish them
    ordered,    ///< in offload order (results finished early wait in a caller-side buffer)
};

/// How an Accelerator is built.
struct AcceleratorOptions {
    /// Worker threads (at least 1).
    unsigned workers = 2;
    /// Task dispatch policy.
    TaskDispatch dispatch = TaskDispatch::round_robin;
    /// Result order.
    ResultOrder collection = ResultOrder::unordered;
    /// Tasks one worker may hold at once (queued, running or finished but unread), rounded up
    /// to a power of two; 0 picks 1024 for round_robin and 4 for on_demand.
    uint32_t capacity = 0;
    /// Transport of the channels between the caller and each worker: `ring` (default), `sm`,
    /// `sm_shared` or `lock` (see the transports in the README).
    std::string transport = "ring";
    /// CPUs to pin the workers to, one per worker in order, each one this process may run on
    /// (else std::invalid_argument). Empty: each worker gets its own
    /// CPU from this process's affinity mask (the first one left to the caller) when there are
    /// enough, and stays unpinned otherwise.
    std::vector<int> cpus;
    /// False: no worker is pinned (`cpus` ignored), each runs where the scheduler puts it, as
    /// an unpinned caller does (several accelerators beside each other then do not all pin
    /// onto the first CPUs of the mask).
    bool pin = true;
    /// Thread name prefix (visible in top/perf), e.g. `accel` gives `accel-w0`, `accel-w1`.
    std::string name = "accel";
    /// Where Accelerator::allocate() puts a task's buffer: the words of the apps' `memory:`
    /// setting (else std::invalid_argument), read for the task's worker (see allocate()):
    ///  - `first_touch` (default): nothing bound; each page lands on the NUMA node of the thread
    ///    that first writes it: the caller's for what it fills, the worker's for a result the
    ///    worker writes first. The TILEPro64's local homing, where the allocating tile is home.
    ///  - `local`: bound to the NUMA node of the task's worker (mbind MPOL_BIND), whoever writes
    ///    it: a home per task on its worker. Unpinned workers have no node of their own, so
    ///    `local` then needs every CPU this process may run on to be on one node (else
    ///    std::invalid_argument).
    ///  - `interleave`: spread page by page over the NUMA nodes of the workers' CPUs (of every
    ///    CPU this process may run on when they are unpinned; MPOL_INTERLEAVE): the
    ///    TILEPro64's hash-for-home, at page rather than cache-line grain.
    /// On a host of one NUMA node the three put every page on node 0 (the kernel still records
    /// the policy); Accelerator::placement() says where a task's buffer goes.
    std::string memory = "first_touch";
};

/// Memory from Accelerator::allocate(): whole pages of its own (so its placement is its own),
/// unmapped when destroyed. Move-only; may be destroyed on any thread.
class AcceleratorBuffer {
public:
    AcceleratorBuffer() = default;
    ~AcceleratorBuffer();
    AcceleratorBuffer(AcceleratorBuffer&& o) noexcept : data_(o.data_), bytes_(o.bytes_) { o.data_ = nullptr, o.bytes_ = 0; }
    AcceleratorBuffer& operator=(AcceleratorBuffer&& o) noexcept;
    AcceleratorBuffer(const AcceleratorBuffer&) = delete;
    AcceleratorBuffer& operator=(const AcceleratorBuffer&) = delete;

    /// The first byte (page-aligned); null for an empty buffer.
    void* data() const { return data_; }
    /// The bytes asked for (the mapping is that rounded up to whole pages).
    size_t size() const { return bytes_; }
    /// data() as a T*.
    template <typename T>
    T* as() const { return static_cast<T*>(data_); }

private:
    friend class detail::AcceleratorMemory;
    AcceleratorBuffer(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

/// How one worker waited for tasks, counted since the accelerator started (read live; exact
/// after wait()). A worker that has a CPU of its own keeps polling for a while before it sleeps,
/// so while the caller streams tasks `parks` stays near zero; each park costs the process a
/// barrier on every CPU it runs on, and the next task a futex wake.
struct AcceleratorWaits {
    uint64_t parks = 0;          ///< times it went to sleep on its doorbell
    uint64_t wakeups = 0;        ///< times the caller woke it (a futex wake)
    uint64_t park_timeouts = 0;  ///< sleeps that ran out their timeout unrung (idle, or a lost wake-up)
    /// Pauses after a short burst of tiny tasks, letting more gather before it looks again
    /// (when the per-worker capacity, rounded up to a power of two, is 128 or more).
    uint64_t pauses = 0;
    /// Of those, the ones it cut short because the caller was waiting for room or for a
    /// result (not those the end of the stream cut): the caller is not outrunning it then.
    uint64_t pauses_cut = 0;
};

/// A misuse of an accelerator or the failure of one of its workers; what() says which.
class AcceleratorError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

/// The typed part of an accelerator, called by the non-template core.
class AcceleratorWork {
public:
    virtual ~AcceleratorWork() = default;
    /// Worker thread `worker`: runs the tasks in `slots[0..n)`.
    virtual void process(unsigned worker, const uint64_t* slots, uint32_t n) = 0;
    /// Caller thread: moves the finished result of `slot` (offload number `seq`) aside, so
    /// the slot can be reused before the caller reads that result.
    virtual void stash(uint64_t slot, uint64_t seq) = 0;
};

/// The non-template core: workers, channels, slot bookkeeping, waiting and errors.
class AcceleratorCore {
public:
    /// Returned by take(): nothing ready now.
    static constexpr int64_t kNone = -1;
    /// Returned by take(): nothing will ever come (end of stream reached).
    static constexpr int64_t kEnd = -2;
    /// take()'s `want` for "any result".
    static constexpr uint64_t kAny = ~uint64_t{0};

    /// Starts the workers; throws std::invalid_argument for bad options.
    AcceleratorCore(const AcceleratorOptions& options, AcceleratorWork& work);
    /// Ends the stream if needed, stops and joins the workers; never throws.
    ~AcceleratorCore();
    AcceleratorCore(const AcceleratorCore&) = delete;
    AcceleratorCore& operator=(const AcceleratorCore&) = delete;

    /// Task slots an accelerator with `options` needs (workers x per-worker capacity); throws
    /// std::invalid_argument for bad options.
    static uint64_t slots_for(const AcceleratorOptions& options);
    /// True once end_of_stream() was called and every task's result was taken.
    bool ended() const;
    /// Caller: a free slot for the next task, waiting for one when `block`; kNone otherwise.
    int64_t reserve(bool block);
    /// Caller: hands the task written into `slot` (from reserve()) to its worker.
    void commit(uint64_t slot);
    /// Caller: a slot whose result is ready, the one of offload number `want` unless kAny;
    /// kNone (not `block`) or kEnd.
    int64_t take(bool block, uint64_t want);
    /// Offload number of the task in `slot`.
    uint64_t seq_of(uint64_t slot) const;
    /// Caller: no more tasks; throws when called twice.
    void end_of_stream();
    /// Caller: ends the stream if needed and joins the workers; throws a worker's failure.
    void wait();
    /// Throws AcceleratorError when a worker has failed.
    void check() const;
    /// How each worker waited, in worker order.
    std::vector<AcceleratorWaits> waits() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// AcceleratorOptions::memory resolved to NUMA nodes, per worker: what allocate() binds.
class AcceleratorMemory {
public:
    /// Throws std::invalid_argument for a policy the options or the host cannot honour.
    explicit AcceleratorMemory(const AcceleratorOptions& options);
    ~AcceleratorMemory();
    AcceleratorMemory(const AcceleratorMemory&) = delete;
    AcceleratorMemory& operator=(const AcceleratorMemory&) = delete;
    /// Any thread: `bytes` of fresh pages placed for `task`'s worker; throws AcceleratorError
    /// when the kernel refuses the placement or the memory.
    AcceleratorBuffer allocate(size_t bytes, uint64_t task) const;
    /// "first_touch", "local on 1", "interleave on 0,1": where allocate(.., task) places.
    std::string placement(uint64_t task) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace detail

/// A farm of `options.workers` threads applying `fn` to tasks offloaded by the caller.
///
/// `fn` is either `Out(In&)` (or `Out(In)`, `Out(In&&)`): the result is what it returns; or,
/// when Out is In, `void(In&)`: it works on the task in place and the task is the result.
/// In and Out must be default-constructible and move-assignable. An exception thrown by `fn`
/// fails the accelerator: the next call (or wait()) throws AcceleratorError naming the worker
/// and what it threw.
template <typename In, typename Out = In>
class Accelerator {
public:
    /// Builds the farm and starts its workers (they sleep until tasks arrive).
    template <typename Fn>
    Accelerator(const AcceleratorOptions& options, Fn fn)
        : memory_(options),
          work_(std::make_unique<Work<Fn>>(std::move(fn), this)),
          ordered_(options.collection == ResultOrder::ordered),
          in_place_(in_place<Fn>()) {
        const uint64_t n = detail::AcceleratorCore::slots_for(options);
        in_.resize(n);
        if (!in_place_) out_.resize(n);
        core_ = std::make_unique<detail::AcceleratorCore>(options, *work_);
    }
    /// Ends the stream and joins the workers if wait() was not called; never throws.
    ~Accelerator() = default;
    Accelerator(const Accelerator&) = delete;
    Accelerator& operator=(const Accelerator&) = delete;

    /// Offloads one task, waiting for room. Throws AcceleratorError after end_of_stream() or
    /// when a worker has failed.
    void offload(In task) {
        const int64_t s = core_->reserve(true);
        in_[static_cast<uint64_t>(s)] = std::move(task);
        core_->commit(static_cast<uint64_t>(s));
    }
    /// Offloads one task if there is room now; returns false (and leaves `task` as it was)
    /// otherwise. Throws as offload() does.
    bool try_offload(In& task) {
        const int64_t s = core_->reserve(false);
        if (s < 0) return false;
        in_[static_cast<uint64_t>(s)] = std::move(task);
        core_->commit(static_cast<uint64_t>(s));
        return true;
    }
    /// Offloads end of stream: no task may follow. Throws AcceleratorError when called twice.
    void end_of_stream() { core_->end_of_stream(); }

    /// Waits for the next result; false once every result was read after end_of_stream().
    /// Throws AcceleratorError when a worker has failed, or when nothing is in flight and
    /// end_of_stream() was not called (it would wait forever).
    bool get_result(Out& out) { return next(out, true); }
    /// The next result if one is ready now; false otherwise (see done() to tell the end).
    /// Throws AcceleratorError when a worker has failed.
    bool try_get_result(Out& out) { return next(out, false); }
    /// True once end_of_stream() was called and every result has been read.
    bool done() const { return pending_.empty() && core_->ended(); }

    /// Offloads end of stream if not done yet and joins the workers; results not read yet stay
    /// readable. Throws AcceleratorError naming the worker that failed and what it threw.
    void wait() { core_->wait(); }

    /// How each worker waited for tasks (see AcceleratorWaits), in worker order.
    std::vector<AcceleratorWaits> worker_waits() const { return core_->waits(); }

    /// `bytes` of fresh memory for the task offloaded as number `task` (0 for the first),
    /// placed by AcceleratorOptions::memory for that task's worker, as a FastFlow task's
    /// buffers come from its allocator: the worker round robin gives it, `task % workers`,
    /// which is where it runs with TaskDispatch::round_robin and ResultOrder::ordered (strict
    /// turns); dispatched otherwise it may run elsewhere, its buffer staying where it was put.
    /// Pages are placed as they are first written, so a buffer filled after allocate() follows
    /// the policy. May be called from any thread, a worker's too. Throws AcceleratorError
    /// when the kernel refuses the placement or the memory.
    AcceleratorBuffer allocate(size_t bytes, uint64_t task) const { return memory_.allocate(bytes, task); }
    /// Where allocate(.., task) puts a buffer: "first_touch", "local on 1", "interleave on 0,1".
    std::string placement(uint64_t task) const { return memory_.placement(task); }

private:
    // True when `fn` works on the task in place: void(In&) with Out == In.
    template <typename Fn>
    static constexpr bool in_place() {
        if constexpr (std::is_same_v<In, Out> && std::is_invocable_v<Fn&, In&>)
            return std::is_void_v<std::invoke_result_t<Fn&, In&>>;
        else
            return false;
    }

    template <typename Fn>
    struct Work final : detail::AcceleratorWork {
        Work(Fn f, Accelerator* a) : fn(std::move(f)), owner(a) {}
        // Worker thread: the slots are this worker's, published to it by the caller.
        void process(unsigned, const uint64_t* slots, uint32_t n) override {
            for (uint32_t i = 0; i < n; ++i) {
                In& task = owner->in_[slots[i]];
                if constexpr (in_place<Fn>()) fn(task);
                else if constexpr (std::is_invocable_v<Fn&, In&&>) owner->out_[slots[i]] = fn(std::move(task));
                else owner->out_[slots[i]] = fn(task);
            }
        }
        void stash(uint64_t slot, uint64_t seq) override { owner->stash(slot, seq); }
        Fn fn;
        Accelerator* owner;
    };

    Out& result(uint64_t slot) {
        if constexpr (std::is_same_v<In, Out>) return in_place_ ? in_[slot] : out_[slot];
        else return out_[slot];
    }

    // Caller thread. Ordered: pending_[i] holds offload number next_seq_ + i once finished.
    void stash(uint64_t slot, uint64_t seq) {
        if (!ordered_) {
            pending_.emplace_back(std::move(result(slot)));
            return;
        }
        const uint64_t i = seq - next_seq_;
        if (pending_.size() <= i) pending_.resize(i + 1);
        pending_[i].emplace(std::move(result(slot)));
    }

    bool next(Out& out, bool block) {
        if (!pending_.empty() && pending_.front().has_value()) {
            out = std::move(*pending_.front());
            pending_.pop_front();
            ++next_seq_;
            return true;
        }
        const int64_t s = core_->take(block, ordered_ ? next_seq_ : detail::AcceleratorCore::kAny);
        if (s < 0) return false;
        out = std::move(result(static_cast<uint64_t>(s)));
        if (ordered_) {
            if (!pending_.empty()) pending_.pop_front();  // the empty place of this number
            ++next_seq_;
        }
        return true;
    }

    detail::AcceleratorMemory memory_;  // first: checks the memory option before any worker starts
    std::unique_ptr<detail::AcceleratorWork> work_;
    const bool ordered_;
    const bool in_place_;
    std::vector<In> in_;
    std::vector<Out> out_;
    std::deque<std::optional<Out>> pending_;  // results moved aside (see stash)
    uint64_t next_seq_ = 0;                   // ordered: the offload number to return next
    std::unique_ptr<detail::AcceleratorCore> core_;  // last: its workers stop before the slots go
};

}  // namespace tp
