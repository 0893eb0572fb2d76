// The scheduler's idle threads: a task whose work arrives where no doorbell rings (a link
// between ranks learns of messages only by looking) bounds how long its thread parks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "framework/runtime/scheduler.hpp"
#include "framework/runtime/task.hpp"

namespace tp {
namespace {

using Clock = std::chrono::steady_clock;

// Ends after `rounds` pieces of work that the test hands it without ringing: each time, the
// time from the hand-over to the poll that takes it.
class UnrungTask final : public Task {
public:
    UnrungTask(int rounds, std::chrono::microseconds unrung_wait) : rounds_(rounds) {
        if (unrung_wait.count() != 0) set_unrung_wait(unrung_wait);
    }
    // release: the hand-over time is visible to the poll that sees the work (acquire).
    void hand_over() {
        handed_at_ = Clock::now();
        work_.store(true, std::memory_order_release);
    }
    bool poll() override {
        if (!work_.load(std::memory_order_acquire)) return false;
        latencies_.push_back(Clock::now() - handed_at_);
        work_.store(false, std::memory_order_relaxed);
        taken_.fetch_add(1, std::memory_order_release);
        return true;
    }
    bool done() const override { return taken_.load(std::memory_order_acquire) == rounds_; }
    int taken() const { return taken_.load(std::memory_order_acquire); }
    const std::vector<Clock::duration>& latencies() const { return latencies_; }

private:
    const int rounds_;
    Clock::time_point handed_at_;
    std::atomic<bool> work_{false};
    std::atomic<int> taken_{0};
    std::vector<Clock::duration> latencies_;  // the tile's thread's, read after the join
};

// Hands the task `rounds` pieces of work, each once its thread has had time to park, and
// returns the longest wait for a poll.
Clock::duration longest_unrung_wait(std::chrono::microseconds unrung_wait, std::chrono::milliseconds park_timeout) {
    constexpr int kRounds = 8;
    IdleBackoff parks_at_once;
    parks_at_once.spin_rounds = parks_at_once.yield_rounds = 0;
    parks_at_once.park_timeout = park_timeout;
    Scheduler s({-1}, parks_at_once);
    UnrungTask task(kRounds, unrung_wait);
    s.add_task(0, &task);
    s.start();
    for (int i = 0; i < kRounds; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the thread parks
        task.hand_over();
        while (task.taken() == i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    s.join();
    Clock::duration longest{};
    for (Clock::duration d : task.latencies()) longest = std::max(longest, d);
    return longest;
}

TEST(Scheduler, AThreadWithATaskNoDoorbellRingsLooksAgainWithinItsUnrungWait) {
    // A park timeout of a second against an unrung wait of a millisecond: a thread that parked
    // for the timeout shows as hundreds of milliseconds; one that honours the task's bound
    // takes a millisecond plus a wake-up (tens of ms on a loaded machine at worst).
    const Clock::duration bounded = longest_unrung_wait(std::chrono::microseconds(1000), std::chrono::milliseconds(1000));
    EXPECT_LT(bounded, std::chrono::milliseconds(250))
        << std::chrono::duration_cast<std::chrono::milliseconds>(bounded).count() << " ms: the thread parked past the task's bound";
    // The same task without a bound waits out the park timeout: what the test above would
    // see if the bound were ignored.
    const Clock::duration unbounded = longest_unrung_wait(std::chrono::microseconds(0), std::chrono::milliseconds(300));
    EXPECT_GT(unbounded, std::chrono::milliseconds(100));
}

}  // namespace
}  // namespace tp
