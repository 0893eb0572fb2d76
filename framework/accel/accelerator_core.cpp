// The non-template core of tp::Accelerator (include/tilepipe/accelerator.hpp).
//
// Worker w owns task slots [w*L, (w+1)*L) and two word channels: `in` (caller -> worker) and
// `out` (worker -> caller), each of capacity L; slot indices travel on them. The caller keeps,
// per worker, how many tasks it sent and how many results it took back, and sends to a worker
// only while fewer than L are outstanding. Since a worker handles its tasks in order, its
// outstanding tasks occupy consecutive slots (mod L) and neither channel can ever be full:
// a worker never waits to hand a result back, so joining it never depends on the caller
// reading results.
//
// Waking: each worker sleeps on its own doorbell, made light (the caller rings it after every
// offload without a fence; a parking worker pays with a process-wide barrier). The caller
// sleeps on one doorbell the workers ring every few bursts of results, when they go idle,
// at exit and on failure. Channels carry no doorbells of their own: this file rings them.
//
// Memory orders: slot contents are published by the channels' release/acquire (see
// Channel); `failed_` and `abort_` are release stores read with acquire, so the failure text
// written before `failed_` is complete when a caller sees it; the per-worker counters are the
// caller's alone.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/accel/accelerator_memory.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/channel/transport_ring.hpp"
#include "framework/metrics/relaxed_counter.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/not_std_exception.hpp"
#include "framework/runtime/wait_policy.hpp"
#include "tilepipe/accelerator.hpp"

namespace tp::detail {

namespace {

constexpr uint32_t kBurst = 32;
// After a short burst a worker pauses before looking again, so that more tasks gather and
// the lines the caller writes (tasks, the channel's slots and index) cross to it in bulk
// rather than a task or two at a time, while the caller works on undisturbed. How long
// adapts per worker, in pauses (23 ns each on this host's CPUs): it doubles while a pause
// brings back two tasks or more and halves when it brings back one or none. Streaming
// tiny tasks it grows to the maximum (about 94 us here), where the caller fills the
// workers' queues while they pause and they then drain them in full bursts. Measured
// (`bench accel`, tiny tasks, 2 workers on 2 CPUs), against a fixed 32 pauses: 0.95x when
// the host's two CPUs are close (a cache line crosses in ~50 ns), 3x when they are far
// apart (~240 ns); a 512 maximum gives 1.2x and 2.3x. A caller blocked in get_result
// stops the pausing: it sends nothing until a result comes back (one task at a time: no
// pause at all); so does one waiting for room: it has filled the queue the pause gathers in.
constexpr uint32_t kGatherMin = 8, kGatherStart = 32, kGatherMax = 4096;
// Tasks taking longer than this each are never followed by a pause: what a pause saves is
// a line transfer or two per task (50 to 250 ns).
constexpr std::chrono::nanoseconds kPauseWorth{250};
// A busy worker sharing CPUs yields after this long (see run_worker). Each yield is a context
// switch; at 50 us they cost 1 us tasks ~5 % of the farm's throughput (`bench accel`), at
// 1 ms nothing measurable, and the caller still gets a CPU within a millisecond.
constexpr std::chrono::microseconds kSlice{1000};
// A worker pinned to a CPU of its own polls this long for its next task before it parks (an
// unpinned one, as a hybrid rank's helpers are, may share its CPU with other threads). A park
// announces itself with membarrier (the doorbell is light: see Impl), which interrupts every
// CPU running a thread of this process, the caller's and the busy workers' included, and the
// next offload then pays a futex wake. Streaming to W workers, each sees a task every W
// offloads, so with the default wait (a few us of spinning and yielding) the gaps of a wide
// farm outlast it: measured on 16 cores (`bench accel`, 1 us tasks), 7.6 Mtasks/s at W = 8 but
// 2.4 at W = 14, and tiny tasks fell from 20.8 (W = 2) to 2.4 (W = 8), parks and wakes paid
// per task. A dedicated CPU has nothing better to do than poll; past this the caller is
// idle, not streaming, and a park costs nothing that matters.
constexpr std::chrono::microseconds kLinger{200};
// A worker rings the caller's doorbell after this many results, and whenever it goes idle: a
// caller asleep waiting for room or results is woken once per few bursts, not per burst (a
// futex wake costs the worker microseconds), and never left waiting, since a worker the
// caller no longer feeds soon goes idle.
constexpr uint32_t kRingEvery = 4 * kBurst;

uint32_t per_worker_capacity(const AcceleratorOptions& o) {
    uint32_t want = o.capacity != 0 ? o.capacity : (o.dispatch == TaskDispatch::round_robin ? 1024u : 4u);
    if (want > (1u << 20)) throw std::invalid_argument("accelerator: capacity must be at most 1048576 tasks per worker, got " + std::to_string(want));
    uint32_t l = 1;
    while (l < want) l <<= 1;
    return l;
}

void check_options(const AcceleratorOptions& o) {
    if (o.workers == 0) throw std::invalid_argument("accelerator: workers must be at least 1, got 0");
    if (o.workers > 1024) throw std::invalid_argument("accelerator: workers must be at most 1024, got " + std::to_string(o.workers));
    static const std::vector<std::string> transports{"ring", "sm", "sm_shared", "lock"};
    if (std::find(transports.begin(), transports.end(), o.transport) == transports.end())
        throw std::invalid_argument("accelerator: unknown transport '" + o.transport + "' (known: ring, sm, sm_shared, lock)");
    if (!o.cpus.empty() && o.cpus.size() != o.workers)
        throw std::invalid_argument("accelerator: cpus lists " + std::to_string(o.cpus.size()) + " CPUs for " +
                                    std::to_string(o.workers) + " workers");
    if (!o.cpus.empty()) {
        const std::vector<int> allowed = allowed_cpus();
        for (int cpu : o.cpus)
            if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end())
                throw std::invalid_argument("accelerator: cpus names CPU " + std::to_string(cpu) +
                                            ", which this process may not run on");
    }
}

}  // namespace

struct AcceleratorCore::Impl {
    struct Worker {
        std::unique_ptr<Channel<uint64_t>> in, out;
        // The same channels when they are `ring`s (the default): the caller's per-task calls
        // then go straight to the final class, inlined, instead of through the vtable.
        RingChannel<uint64_t>* in_ring = nullptr;
        RingChannel<uint64_t>* out_ring = nullptr;
        Doorbell bell;
        std::thread thread;
        // Caller only. `taken` counts results returned (their slots are free again once the
        // caller has read them); results received from `out` but not returned yet wait in
        // `ready[ready_at, ready_end)`, in the worker's order.
        uint64_t sent = 0, taken = 0;
        uint32_t ready_at = 0, ready_end = 0;
        uint64_t ready[kBurst];
        uint64_t parks_seen = 0;
        // Written by the worker when it changes (see commit()): its own line, rarely written,
        // so the caller's looks stay in its cache. relaxed: a hint.
        alignas(kNoFalseSharing) std::atomic<bool> tiny_tasks{true};
        // Written by the worker only, read by waits(): a line pair apart from tiny_tasks, which
        // the caller reads per turn (the adjacent-line prefetcher moves lines in pairs).
        alignas(kNoFalseSharing) RelaxedCounter pauses;
        RelaxedCounter pauses_cut;
    };

    AcceleratorWork& work;
    const unsigned n;
    const uint32_t cap;  // L: tasks one worker may hold
    const unsigned cap_log2;
    const bool ordered;  // seq_of is kept only for ordered collection
    const bool round_robin;
    const uint32_t max_turn;  // round robin: most tasks given to a worker in a row
    const uint32_t ring_every;  // results a worker hands back between rings of the caller
    const bool pausing;         // workers pause after short bursts (see kGatherStart)
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<uint64_t> seq_of;  // caller only: offload number of each slot's task
    Doorbell caller_bell;
    WaitPolicy caller_wait, worker_wait;

    // Caller-only state.
    uint64_t offloaded = 0;
    unsigned next_worker = 0;  // round robin / tie-breaking start
    // Round robin in turns of `turn` tasks (see commit()).
    uint32_t turn = 1, turn_left = 0;
    unsigned turn_worker = ~0u;
    unsigned next_collect = 0;
    bool eos = false;
    bool joined = false;
    bool shared_cpus = false;  // more threads than CPUs (set before the workers start)

    // Written by the caller around its waits (for a result or for room: caller_waits), read by
    // workers after each short burst: its own line, so the caller's other state never travels
    // with it.
    alignas(kNoFalseSharing) std::atomic<uint32_t> caller_waiting{0};
    std::atomic<bool> ending{false};  // end_of_stream() was called: pausing gathers nothing more

    // Shared: set once by a failing worker (first failure wins), read by the caller.
    alignas(64) std::atomic<bool> failed{false};
    std::atomic<bool> abort{false};
    std::mutex failure_mutex;
    std::string failure;

    Impl(const AcceleratorOptions& o, AcceleratorWork& w)
        : work(w), n(o.workers), cap(per_worker_capacity(o)), cap_log2(static_cast<unsigned>(__builtin_ctz(cap))),
          ordered(o.collection == ResultOrder::ordered), round_robin(o.dispatch == TaskDispatch::round_robin),
          max_turn(std::clamp(per_worker_capacity(o) / 8, 1u, kBurst)),
          ring_every(std::clamp(per_worker_capacity(o) / 2, 1u, kRingEvery)),
          // A worker that holds a few tasks at most (on demand's 4) gathers no more by
          // pausing: its queue is full after those few, and the caller waits meanwhile.
          pausing(per_worker_capacity(o) >= 4 * kBurst),
          seq_of(uint64_t{o.workers} * per_worker_capacity(o)) {
        const std::vector<int> allowed = allowed_cpus();
        const bool shared = allowed.size() < n + 1;  // the caller counts as a thread
        shared_cpus = shared;
        // Spinning on a CPU another runnable thread needs only delays it: yield at once then.
        if (shared) caller_wait.spin_rounds = worker_wait.spin_rounds = 0;
        // A caller waiting for room or results yields for a while before sleeping: a worker
        // hands results back in bursts, and waking a sleeping caller for each one would cost
        // the worker a futex call per burst.
        // Sharing CPUs, it sleeps sooner instead: a thread polling a CPU keeps a worker waiting
        // for that CPU off it under a real-time policy.
        caller_wait.yield_rounds = shared ? 16 : 256;
        for (unsigned i = 0; i < n; ++i) {
            auto wk = std::make_unique<Worker>();
            wk->in = make_word_channel({o.transport, cap, -1});
            wk->out = make_word_channel({o.transport, cap, -1});
            wk->in_ring = dynamic_cast<RingChannel<uint64_t>*>(wk->in.get());
            wk->out_ring = dynamic_cast<RingChannel<uint64_t>*>(wk->out.get());
            wk->bell.make_light();  // rung after every offload (ring_light)
            workers.push_back(std::move(wk));
        }
        const std::vector<int> cpus = accelerator_worker_cpus(o, allowed);
        for (unsigned i = 0; i < n; ++i) {
            const int cpu = cpus[i];
            const std::string name = o.name + "-w" + std::to_string(i);
            workers[i]->thread = std::thread([this, i, cpu, name] { run_worker(i, cpu, name); });
        }
    }

    // Worker thread i: take bursts of slots, run them, hand them back; until end of stream.
    void run_worker(unsigned i, int cpu, const std::string& name) {
        Worker& w = *workers[i];
        if (cpu >= 0) pin_current_thread(cpu);
        name_current_thread(name.c_str());
        uint64_t slots[kBurst];
        auto slice_start = std::chrono::steady_clock::now();
        uint32_t unrung = 0;  // results handed back since the caller's doorbell was last rung
        uint32_t gather = kGatherStart;
        bool paused = false;  // the last burst was followed by a gathering pause
        for (;;) {
            uint32_t got = 0;
            bool stop = false;
            auto attempt = [&] {
                if (abort.load(std::memory_order_acquire)) return stop = true;
                if ((got = w.in->try_recv_burst(slots, kBurst)) != 0) return true;
                if (!w.in->closed()) return false;
                // closed() is an acquire after the caller's last send: empty now means drained.
                got = w.in->try_recv_burst(slots, kBurst);
                stop = got == 0;
                return true;
            };
            const bool found = attempt();
            if (paused) gather = found && got >= 2 ? std::min(gather * 2, kGatherMax) : std::max(gather / 2, kGatherMin);
            paused = false;
            if (!found) {
                // Going idle: whatever was handed back unannounced is announced now, so a
                // caller waiting for it wakes (see kRingEvery).
                if (unrung != 0) caller_bell.ring(), unrung = 0;
                if (cpu < 0 || shared_cpus || !linger(attempt))
                    worker_wait.wait(attempt, [&](auto& a) { return park_on(&w.bell, worker_wait, a); });
            }
            if (stop) break;
            // The work is timed, to tell tiny tasks (see kPauseWorth) from the rest: for the
            // pauses after short bursts and for the caller's turns (see commit()). Two clock
            // reads per burst, under a nanosecond per task in a full one.
            const auto t0 = pausing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
            try {
                work.process(i, slots, got);
            } catch (const std::exception& e) {
                fail(i, e.what());
                return;
            } catch (...) {
                fail(i, kNotStdException);
                return;
            }
            bool tiny = false;
            if (pausing) {
                // Tiny below kPauseWorth a task, long from twice that; in between, as before:
                // a task near the bound, or a burst the kernel interrupted, flips nothing.
                const auto took = std::chrono::steady_clock::now() - t0;
                const bool was = w.tiny_tasks.load(std::memory_order_relaxed);
                tiny = was ? took < 2 * got * kPauseWorth : took < got * kPauseWorth;
                if (tiny != was) w.tiny_tasks.store(tiny, std::memory_order_relaxed);
            }
            // Never short: at most L tasks are outstanding per worker and `out` holds L.
            uint32_t done = 0;
            while ((done += w.out->try_send_burst(slots + done, got - done)) != got) yield_cpu();
            if ((unrung += got) >= ring_every) caller_bell.ring(), unrung = 0;
            // A short burst means the worker keeps up with the caller: let more gather (see
            // kGatherStart), unless its tasks are long enough that the lines' crossing is
            // lost in their work: a pause would only idle a worker the caller is waiting on.
            if (tiny && got < kBurst) paused = gather_pause(w, gather);
            // Sharing CPUs, a busy worker yields now and then: under a real-time policy
            // nothing else would run on its CPU until its queue empties, the caller included,
            // and every other worker would starve for tasks meanwhile.
            if (shared_cpus) {
                const auto now = std::chrono::steady_clock::now();
                if (now - slice_start > kSlice) {
                    yield_cpu();
                    slice_start = std::chrono::steady_clock::now();
                }
            }
        }
        w.out->close();
        caller_bell.ring();
    }

    // Polls `attempt` for up to kLinger on a CPU this worker has to itself: true when it
    // succeeded. The clock is read every 256 pauses and the CPU offered to anything else
    // runnable every 4096 (a yield with nothing else to run returns at once).
    template <typename Attempt>
    static bool linger(Attempt& attempt) {
        const auto until = std::chrono::steady_clock::now() + kLinger;
        for (uint32_t k = 1;; ++k) {
            if (attempt()) return true;
            cpu_pause();
            if ((k & 255) == 0) {
                if (std::chrono::steady_clock::now() >= until) return false;
                if ((k & 4095) == 0) yield_cpu();
            }
        }
    }

    // Pauses `n` times, unless the caller is or starts waiting (for room or results), the
    // stream ends or the accelerator aborts: true when it paused in full. Looked at every 16
    // pauses (a few hundred ns); both lines are rarely written, so the looks stay in this
    // core's cache.
    // Sharing CPUs it yields there too: the caller may be waiting for this CPU.
    // relaxed: hints; the worker's next attempt reads the channel with acquire.
    bool gather_pause(Worker& w, uint32_t n) const {
        w.pauses.inc();
        for (uint32_t k = 0; k < n; ++k) {
            if ((k & 15) == 0) {
                if (caller_waiting.load(std::memory_order_relaxed) != 0) {
                    w.pauses_cut.inc();
                    return false;
                }
                if (ending.load(std::memory_order_relaxed) || abort.load(std::memory_order_relaxed)) return false;
                if (shared_cpus && k != 0) yield_cpu();
            }
            cpu_pause();
        }
        return true;
    }

    void fail(unsigned i, const std::string& what) {
        {
            std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failed.load(std::memory_order_relaxed))
                failure = "accelerator worker " + std::to_string(i) + " of " + std::to_string(n) + " failed: " + what;
        }
        failed.store(true, std::memory_order_release);  // after the text: see check()
        abort.store(true, std::memory_order_release);
        for (auto& w : workers) w->bell.ring();
        caller_bell.ring();
    }

    void check() {
        if (failed.load(std::memory_order_acquire)) {
            std::lock_guard<std::mutex> lock(failure_mutex);
            throw AcceleratorError(failure);
        }
    }

    uint64_t outstanding(unsigned i) const { return workers[i]->sent - workers[i]->taken; }
    bool idle() const {
        for (unsigned i = 0; i < n; ++i)
            if (outstanding(i) != 0) return false;
        return true;
    }

    // The worker the next task goes to, or -1 when none has room.
    int pick() const {
        if (round_robin) {
            // In turn, passing over a worker with no room (as FastFlow's default emitter
            // does): a worker that is not running, its CPU taken by another thread, fills up
            // and the others take its turns, instead of the caller waiting for it while they
            // sit idle. Not when ordered: results behind a stalled worker's cannot be returned
            // anyway, and the others' would pile up in the caller's buffer without bound.
            if (ordered) return outstanding(next_worker) < cap ? static_cast<int>(next_worker) : -1;
            for (unsigned k = 0, i = next_worker; k < n; ++k, i = i + 1 == n ? 0 : i + 1)
                if (outstanding(i) < cap) return static_cast<int>(i);
            return -1;
        }
        int best = -1;
        uint64_t least = cap;
        for (unsigned k = 0, i = next_worker; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
            if (outstanding(i) < least) least = outstanding(i), best = static_cast<int>(i);
        }
        return best;
    }

    // Moves up to a burst of finished results out of their slots, so the next offload finds
    // one free: from the first worker that has some, looking from the next one in turn.
    void make_room() {
        for (unsigned k = 0, i = next_worker; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
            uint32_t moved = 0;
            for (int64_t s; moved < kBurst && (s = take_from(i)) >= 0; ++moved)
                work.stash(static_cast<uint64_t>(s), seq_of[static_cast<uint64_t>(s)]);
            if (moved != 0) return;
        }
    }

    // Caller waits with `attempt`, sleeping on its doorbell once spinning and yielding failed.
    // Pausing workers stop pausing meanwhile (see kGatherStart): a caller waiting for results
    // sends nothing until one comes back, and one waiting for room has filled the queues a
    // pause was gathering for. relaxed: a hint; cleared also when the wait throws.
    template <typename Attempt>
    void caller_waits(Attempt&& attempt) {
        if (attempt()) return;  // room or a result at hand: no wait, no pause cut
        caller_waiting.store(1, std::memory_order_relaxed);
        struct Clear {
            std::atomic<uint32_t>& flag;
            ~Clear() { flag.store(0, std::memory_order_relaxed); }
        } clear{caller_waiting};
        caller_wait.wait(attempt, [&](auto& a) { return park_on(&caller_bell, caller_wait, a); });
    }

    // Worker i's next result, or kNone. Results are received a burst at a time: taking them one
    // by one, round the workers, cost the caller a miss on each worker's `out` index per result
    // (the worker wrote it since), and the caller alone collects for every worker.
    int64_t take_from(unsigned i) {
        Worker& w = *workers[i];
        if (w.ready_at == w.ready_end) {
            const uint32_t got = w.out_ring != nullptr ? w.out_ring->try_recv_burst(w.ready, kBurst)
                                                       : w.out->try_recv_burst(w.ready, kBurst);
            if (got == 0) return kNone;
            w.ready_at = 0, w.ready_end = got;
        }
        ++w.taken;
        return static_cast<int64_t>(w.ready[w.ready_at++]);
    }

    // One look for a result: a slot, kNone, or kEnd; throws when blocking could never end.
    int64_t poll(bool block, uint64_t want) {
        check();
        if (want == kAny) {
            bool busy = false;
            for (unsigned k = 0, i = next_collect; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
                if (outstanding(i) == 0) continue;
                busy = true;
                const int64_t s = take_from(i);
                if (s >= 0) {
                    // The rest of this worker's burst first: its slots are next to each other.
                    const Worker& w = *workers[i];
                    next_collect = w.ready_at != w.ready_end ? i : i + 1 == n ? 0 : i + 1;
                    return s;
                }
            }
            if (busy) return kNone;
        } else {
            for (unsigned i = 0; i < n; ++i)
                if (outstanding(i) != 0 && seq_of[uint64_t{i} * cap + (workers[i]->taken & (cap - 1))] == want)
                    return take_from(i);
        }
        if (eos) return kEnd;
        if (block)
            throw AcceleratorError("accelerator: get_result would wait forever: no task is in flight and "
                                   "end_of_stream() was not called");
        return kNone;
    }
};

uint64_t AcceleratorCore::slots_for(const AcceleratorOptions& options) {
    check_options(options);
    return uint64_t{options.workers} * per_worker_capacity(options);
}

AcceleratorCore::AcceleratorCore(const AcceleratorOptions& options, AcceleratorWork& work) {
    check_options(options);
    impl_ = std::make_unique<Impl>(options, work);
}

AcceleratorCore::~AcceleratorCore() {
    Impl& m = *impl_;
    if (m.joined) return;
    // Not waited for: tasks still queued are dropped with the accelerator.
    m.abort.store(true, std::memory_order_release);
    for (auto& w : m.workers) {
        if (!m.eos) w->in->close();
        w->bell.ring();
    }
    for (auto& w : m.workers) w->thread.join();
}

int64_t AcceleratorCore::reserve(bool block) {
    Impl& m = *impl_;
    m.check();
    if (m.eos) throw AcceleratorError("accelerator: offload after end_of_stream()");
    int w = m.pick();
    if (w < 0) {
        auto attempt = [&] {
            m.check();
            m.make_room();
            return (w = m.pick()) >= 0;
        };
        if (block) m.caller_waits(attempt);
        else if (!attempt()) return kNone;
    }
    return static_cast<int64_t>(uint64_t(w) * m.cap + (m.workers[w]->sent & (m.cap - 1)));
}

void AcceleratorCore::commit(uint64_t slot) {
    Impl& m = *impl_;
    const unsigned i = static_cast<unsigned>(slot >> m.cap_log2);  // per-task: no division
    Impl::Worker& w = *m.workers[i];
    if (m.ordered) m.seq_of[slot] = m.offloaded;
    ++m.offloaded;
    ++w.sent;
    // Never refused: fewer than L tasks were outstanding (reserve) and `in` holds L.
    while (!(w.in_ring != nullptr ? w.in_ring->try_send(slot) : w.in->try_send(slot))) yield_cpu();
    w.bell.ring_light();
    // Ordered collection keeps strict turns of one: task n runs on worker n % workers, which
    // allocate() places memory for.
    if (!m.round_robin || m.ordered) {
        m.next_worker = i + 1 == m.n ? 0 : i + 1;
        return;
    }
    // A worker's turn lasts `turn` tasks: one while tasks are tiny (the workers gather them by
    // pausing, see kGatherStart), when the worker parked since its last turn or the caller
    // waited for a result (see take(): the caller is not streaming). Otherwise it doubles when
    // the worker whose turn begins has finished all it was given, i.e. the caller, which alone
    // dispatches and collects, is the bottleneck: a worker given one task at a time hands each
    // result back alone, and the caller pays a miss on that worker's lines per result; in
    // turns they come back in bursts (measured on 16 cores, 1 us tasks, 12 and 14 workers:
    // 2.1x). It halves when the worker is still busy: single tasks share long ones out best.
    if (i != m.turn_worker || m.turn_left == 0) {
        const uint64_t parks = w.bell.parks();
        const bool parked = parks != w.parks_seen;
        w.parks_seen = parks;
        const uint64_t received = w.taken + (w.ready_end - w.ready_at);  // results seen back
        if (parked || w.tiny_tasks.load(std::memory_order_relaxed)) m.turn = 1;
        else if (w.sent > 1 && received + 1 == w.sent) m.turn = std::min(m.turn * 2, m.max_turn);
        else if (received + 1 != w.sent) m.turn = std::max(m.turn / 2, 1u);
        m.turn_worker = i;
        m.turn_left = m.turn;
    }
    m.next_worker = --m.turn_left != 0 ? i : i + 1 == m.n ? 0 : i + 1;
}

int64_t AcceleratorCore::take(bool block, uint64_t want) {
    Impl& m = *impl_;
    int64_t got = m.poll(block, want);
    if (got != kNone || !block) return got;
    // A caller that waits for results is not outrunning the workers: turns restart at one
    // task (see commit()), which also spares the next offload the worker that is ringing it.
    m.turn = 1;
    m.turn_left = 0;
    m.caller_waits([&] { return (got = m.poll(true, want)) != kNone; });
    return got;
}

uint64_t AcceleratorCore::seq_of(uint64_t slot) const { return impl_->seq_of[slot]; }

bool AcceleratorCore::ended() const { return impl_->eos && impl_->idle(); }

void AcceleratorCore::end_of_stream() {
    Impl& m = *impl_;
    if (m.eos) throw AcceleratorError("accelerator: end_of_stream() called twice");
    m.eos = true;
    m.ending.store(true, std::memory_order_relaxed);  // a hint: the channels' close() orders the rest
    for (auto& w : m.workers) {
        w->in->close();  // release: after every offload to this worker
        w->bell.ring();
    }
}

void AcceleratorCore::wait() {
    Impl& m = *impl_;
    if (!m.joined) {
        if (!m.eos) end_of_stream();
        for (auto& w : m.workers) w->thread.join();
        m.joined = true;
    }
    m.check();
}

void AcceleratorCore::check() const { impl_->check(); }

std::vector<AcceleratorWaits> AcceleratorCore::waits() const {
    std::vector<AcceleratorWaits> out;
    // Statistics, exact after wait() (the join orders them).
    for (const auto& w : impl_->workers)
        out.push_back({w->bell.parks(), w->bell.wakeups(), w->bell.park_timeouts(), w->pauses.get(), w->pauses_cut.get()});
    return out;
}

}  // namespace tp::detail
