// Scheduler: runs an app's node tasks on OS threads, one thread per CPU-pinned tile group.
//
// Each thread polls its tasks in turn (cooperative: a task never blocks), so several nodes
// can share one CPU without context switches. A thread that finds no work backs off: a short
// spin with pause (only when it owns its CPU), then sched_yield, then it parks on its
// Doorbell until a producer or consumer of one of its channels rings it. Threads register
// with DPDK (rte_thread_register) so that mempool per-lcore caches work for them.
// An exception out of a task's poll() fails that task, not the thread: see Task.
// A cut (cut_requested(), a second Ctrl-C) ends every thread at its next poll; finish_cut()
// then frees what the tasks and channels still hold.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/task.hpp"

namespace tp {

struct IdleBackoff {
    uint32_t spin_rounds = 256;   // pause-loops before yielding (0 when CPUs are shared)
    uint32_t yield_rounds = 64;   // sched_yield calls before parking
    std::chrono::microseconds park_timeout{1000};  // safety net: a missed wake costs this
};

class Scheduler {
public:
    // One OS thread per entry of `cpus` (-1 = unpinned); tasks are added with add_task().
    Scheduler(const std::vector<int>& cpus, IdleBackoff backoff);
    ~Scheduler();

    size_t threads() const { return tiles_.size(); }
    void add_task(size_t thread, Task* task);
    Doorbell* bell(size_t thread) { return &tiles_[thread]->bell; }
    int cpu(size_t thread) const { return tiles_[thread]->cpu; }

    // Starts every thread, waits until all are ready, then releases them together.
    void start();
    bool finished() const { return running_.load(std::memory_order_acquire) == 0; }
    void join();
    // After join(), when the run was cut short (cut_requested()): gives every task that is not
    // done poll_cut() in turn on this thread until each has freed and counted what it held,
    // what its inputs held and what its upstream still hands it.
    // Returns how many tasks it had to cut (0: the run had ended before the cut).
    size_t finish_cut();

    std::chrono::steady_clock::time_point start_time() const { return t0_; }
    std::chrono::steady_clock::time_point end_time() const;

private:
    struct Tile {
        int cpu = -1;
        std::vector<Task*> tasks;
        Doorbell bell;
        std::thread thread;
        std::chrono::steady_clock::time_point end;
    };
    void run_tile(Tile& t);
    bool poll_all(Tile& t);
    static bool waits_unrung(const Tile& t);

    std::vector<std::unique_ptr<Tile>> tiles_;
    IdleBackoff backoff_;
    std::atomic<int> ready_{0};
    std::atomic<bool> go_{false};
    std::atomic<int> running_{0};
    std::chrono::steady_clock::time_point t0_;
};

}  // namespace tp
