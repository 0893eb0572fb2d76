#include "framework/runtime/scheduler.hpp"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <sched.h>

#include <algorithm>
#include <exception>
#include <string>

#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/not_std_exception.hpp"
#include "framework/runtime/stop_request.hpp"

namespace tp {

Scheduler::Scheduler(const std::vector<int>& cpus, IdleBackoff backoff) : backoff_(backoff) {
    for (int c : cpus) {
        tiles_.push_back(std::make_unique<Tile>());
        tiles_.back()->cpu = c;
    }
}

Scheduler::~Scheduler() { join(); }

void Scheduler::add_task(size_t thread, Task* task) { tiles_.at(thread)->tasks.push_back(task); }

// Whether a live task of the tile may get work that no doorbell rings.
bool Scheduler::waits_unrung(const Tile& t) {
    for (const Task* task : t.tasks)
        if (task->waits_unrung() && !task->finished()) return true;
    return false;
}

namespace {
// One poll of one task. An exception is the task's failure, not the thread's: it is recorded
// on the task, the run is asked to stop as Ctrl-C would, and the task drains from then on.
bool poll_task(Task& task) {
    if (task.failed()) return !task.finished() && task.poll_failed();
    try {
        return task.poll();
    } catch (const std::exception& e) {
        task.record_failure(e.what());
    } catch (...) {
        task.record_failure(kNotStdException);
    }
    request_stop();
    return true;
}
}  // namespace

bool Scheduler::poll_all(Tile& t) {
    // One TSC read per poll: the time of each poll that moved work is the task's busy time,
    // whatever kind of node it is (stages, emitters, collectors, map tasks).
    bool any = false;
    uint64_t t0 = rte_rdtsc();
    for (Task* task : t.tasks) {
        const bool moved = poll_task(*task);
        const uint64_t t1 = rte_rdtsc();
        // The poll that ends a task (closing its stages, flushing files) follows its last
        // packet: not work inside the report's timed window.
        if (moved && !task->finished()) task->add_busy_cycles(t1 - t0);
        t0 = t1;
        any |= moved;
    }
    return any;
}

namespace {
size_t live_tasks(const std::vector<Task*>& tasks) {
    size_t live = 0;
    for (const Task* task : tasks) live += task->finished() ? 0 : 1;
    return live;
}
}  // namespace

void Scheduler::run_tile(Tile& t) {
    if (t.cpu >= 0) pin_current_thread(t.cpu);
    name_current_thread(("tp-tile" + std::to_string(t.cpu)).c_str());
    const bool registered = rte_thread_register() == 0;
    // release/acquire: start() sees every tile pinned and registered before it takes t0_,
    // and every tile sees t0_ and the tasks' opened state before its first poll.
    ready_.fetch_add(1, std::memory_order_release);
    while (!go_.load(std::memory_order_acquire)) sched_yield();

    size_t live = t.tasks.size();
    uint32_t idle = 0;
    while (live != 0 && !cut_requested()) {
        if (poll_all(t)) {
            idle = 0;
            live = live_tasks(t.tasks);
            continue;
        }
        ++idle;
        if (idle <= backoff_.spin_rounds) {
            rte_pause();
        } else if (idle <= backoff_.spin_rounds + backoff_.yield_rounds) {
            sched_yield();
        } else {
            t.bell.prepare_park();
            if (poll_all(t)) {  // work arrived between the last poll and the announcement
                t.bell.cancel_park();
                idle = 0;
                live = live_tasks(t.tasks);
            } else {
                // A nap, not a park nobody rang in time: counted as such (retry_naps).
                if (waits_unrung(t)) t.bell.retry_soon();
                t.bell.park(backoff_.park_timeout);
            }
        }
    }
    t.end = std::chrono::steady_clock::now();
    if (registered) rte_thread_unregister();
    running_.fetch_sub(1, std::memory_order_release);  // end time and counters visible to join()
}

void Scheduler::start() {
    // relaxed: the threads created below see it (thread creation synchronises).
    running_.store(static_cast<int>(tiles_.size()), std::memory_order_relaxed);
    for (auto& t : tiles_) {
        Tile* tile = t.get();
        tile->thread = std::thread([this, tile] { run_tile(*tile); });
    }
    while (ready_.load(std::memory_order_acquire) != static_cast<int>(tiles_.size())) sched_yield();  // see run_tile
    t0_ = std::chrono::steady_clock::now();
    go_.store(true, std::memory_order_release);
}

void Scheduler::join() {
    for (auto& t : tiles_)
        if (t->thread.joinable()) t->thread.join();
}

size_t Scheduler::finish_cut() {
    std::vector<Task*> tasks;
    for (auto& t : tiles_)
        for (Task* task : t->tasks)
            if (!task->finished()) {
                task->mark_cut();
                tasks.push_back(task);
            }
    const size_t cut = tasks.size();
    // Each round every task gives back and forwards what it can; a task ends once its inputs
    // are closed and drained, and each closes its outputs on its first call, so this ends.
    while (!tasks.empty()) {
        for (Task* task : tasks) {
            if (task->failed()) {
                task->poll_failed();
                continue;
            }
            try {
                task->poll_cut();
            } catch (const std::exception& e) {
                task->record_failure(e.what());
            } catch (...) {
                task->record_failure(kNotStdException);
            }
        }
        std::erase_if(tasks, [](const Task* task) { return task->finished(); });
    }
    return cut;
}

std::chrono::steady_clock::time_point Scheduler::end_time() const {
    auto end = t0_;
    for (const auto& t : tiles_) end = std::max(end, t->end);
    return end;
}


}  // namespace tp
