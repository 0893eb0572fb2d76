// The scheduler's idle threads: a task whose work may arrive where no doorbell rings (a link
// between ranks learns of messages only by looking) has its thread nap, not park.
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
    UnrungTask(int rounds, bool unrung) : rounds_(rounds) { set_waits_unrung(unrung); }
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

struct Waits {
    Clock::duration longest{};  // from a hand-over to the poll that took it
    uint64_t park_timeouts = 0, naps = 0;
};

// Hands the task `rounds` pieces of work, each once its thread has had time to park.
Waits unrung_waits(bool unrung, std::chrono::milliseconds park_timeout) {
    constexpr int kRounds = 8;
    IdleBackoff parks_at_once;
    parks_at_once.spin_rounds = parks_at_once.yield_rounds = 0;
    parks_at_once.park_timeout = park_timeout;
    Scheduler s({-1}, parks_at_once);
    UnrungTask task(kRounds, unrung);
    s.add_task(0, &task);
    s.start();
    for (int i = 0; i < kRounds; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the thread parks
        task.hand_over();
        while (task.taken() == i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    s.join();
    Waits w;
    for (Clock::duration d : task.latencies()) w.longest = std::max(w.longest, d);
    w.park_timeouts = s.bell(0)->park_timeouts();
    w.naps = s.bell(0)->retry_naps();
    return w;
}

TEST(Scheduler, AThreadWhoseTaskWaitsUnrungNapsInsteadOfParkingForTheTimeout) {
    // A park timeout of a second against naps of Doorbell::kRetryNap (50 us): a thread that
    // parked for the timeout shows as hundreds of milliseconds; one that naps takes a nap
    // plus a wake-up (tens of ms on a loaded machine at worst). Its naps are not counted as
    // parks that nobody rang in time (the report's wake-ups lost or late).
    const Waits napping = unrung_waits(true, std::chrono::milliseconds(1000));
    EXPECT_LT(napping.longest, std::chrono::milliseconds(250))
        << std::chrono::duration_cast<std::chrono::milliseconds>(napping.longest).count() << " ms: the thread parked past its nap";
    EXPECT_GT(napping.naps, 0u);
    EXPECT_EQ(napping.park_timeouts, 0u);
    // The same task, not waiting unrung, waits out the park timeout: what the case above would
    // see if the scheduler ignored the task's word.
    const Waits parking = unrung_waits(false, std::chrono::milliseconds(300));
    EXPECT_GT(parking.longest, std::chrono::milliseconds(100));
    EXPECT_GT(parking.park_timeouts, 0u);
}

}  // namespace
}  // namespace tp
