// Accelerator mode: what a caller offloading tasks from its own thread relies on: every task
// processed exactly once, in offload order when ordered, end of stream, results kept across
// wait(), and errors instead of hangs (offload after end of stream, a worker that threw,
// a get_result that could never return).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sched.h>

#include "tilepipe/accelerator.hpp"

namespace tp {
namespace {

struct Job {
    uint64_t id = 0;
    uint64_t value = 0;
};

struct Case {
    TaskDispatch dispatch;
    ResultOrder collection;
    std::string transport;
    uint32_t capacity;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
    const Case& c = info.param;
    return std::string(c.dispatch == TaskDispatch::round_robin ? "round_robin" : "on_demand") + "_" +
           (c.collection == ResultOrder::ordered ? "ordered" : "unordered") + "_" + c.transport + "_" +
           std::to_string(c.capacity);
}

void PrintTo(const Case& c, std::ostream* os) {
    *os << (c.dispatch == TaskDispatch::round_robin ? "round_robin" : "on_demand") << "/"
        << (c.collection == ResultOrder::ordered ? "ordered" : "unordered") << "/" << c.transport << "/" << c.capacity;
}

AcceleratorOptions options_for(const Case& c, unsigned workers) {
    AcceleratorOptions o;
    o.workers = workers;
    o.dispatch = c.dispatch;
    o.collection = c.collection;
    o.transport = c.transport;
    o.capacity = c.capacity;
    return o;
}

class AcceleratorDelivery : public testing::TestWithParam<Case> {};

// The caller offloads far more tasks than the farm holds without reading a single result,
// then reads them all: nothing lost, nothing doubled, each result the function of its task,
// and with ordered collection in offload order. Run under ThreadSanitizer too.
TEST_P(AcceleratorDelivery, EveryTaskComesBackExactlyOnceAndInOrderWhenOrdered) {
    const Case c = GetParam();
    Accelerator<Job, Job> acc(options_for(c, 3), [](Job t) {
        t.value = t.id * 3 + 1;
        return t;
    });
    constexpr uint64_t kTasks = 5000;
    std::vector<int> seen(kTasks, 0);
    uint64_t expected_next = 0;
    uint64_t got = 0;
    Job r;
    auto check = [&](const Job& t) {
        ASSERT_LT(t.id, kTasks);
        EXPECT_EQ(t.value, t.id * 3 + 1);
        ++seen[t.id];
        if (c.collection == ResultOrder::ordered) {
            EXPECT_EQ(t.id, expected_next);
        }
        ++expected_next;
        ++got;
    };
    for (uint64_t i = 0; i < kTasks; ++i) {
        acc.offload(Job{i, 0});
        // Read a few now and then, as a caller that overlaps offloading and collecting does.
        if (i % 7 == 0)
            while (acc.try_get_result(r)) check(r);
    }
    acc.end_of_stream();
    while (acc.get_result(r)) check(r);
    EXPECT_TRUE(acc.done());
    EXPECT_FALSE(acc.get_result(r));  // after the last result: false again, never a wait
    acc.wait();
    EXPECT_EQ(got, kTasks);
    for (uint64_t i = 0; i < kTasks; ++i) ASSERT_EQ(seen[i], 1) << "task " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Farm, AcceleratorDelivery,
    testing::Values(Case{TaskDispatch::round_robin, ResultOrder::unordered, "ring", 0},
                    Case{TaskDispatch::round_robin, ResultOrder::ordered, "ring", 0},
                    Case{TaskDispatch::on_demand, ResultOrder::unordered, "ring", 0},
                    Case{TaskDispatch::on_demand, ResultOrder::ordered, "ring", 0},
                    Case{TaskDispatch::on_demand, ResultOrder::ordered, "sm", 2},
                    Case{TaskDispatch::round_robin, ResultOrder::ordered, "sm_shared", 8},
                    Case{TaskDispatch::round_robin, ResultOrder::unordered, "lock", 1}),
    case_name);

// Busy for `d` on this thread (a task's work, a caller's gap between offloads).
void busy_for(std::chrono::nanoseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

// A worker with a CPU of its own keeps polling between tasks that come up to a hundred microseconds
// apart instead of parking: each park interrupts every CPU of the process (membarrier) and
// costs the next offload a futex wake, which made wide farms collapse. Without the linger a
// worker parks in nearly every gap.
TEST(Accelerator, AWorkerWithItsOwnCpuPollsThroughShortGapsInsteadOfParking) {
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    if (CPU_COUNT(&set) < 2) GTEST_SKIP() << "needs 2 CPUs (one for the caller, one for the worker)";
    // A thread the kernel preempted (other work on a loaded machine) may outlast the linger
    // through no fault of the worker: each involuntary switch of the caller or the worker
    // excuses one park.
    auto preemptions = [] {
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        return static_cast<uint64_t>(u.ru_nivcsw);
    };
    std::atomic<uint64_t> worker_preempted{0};
    AcceleratorOptions o;
    o.workers = 1;
    Accelerator<int> acc(o, [&](int& x) {
        busy_for(std::chrono::microseconds(1));
        worker_preempted.store(preemptions(), std::memory_order_relaxed);  // the worker's own count
        ++x;
    });
    constexpr int kTasks = 400;
    int r = 0, results = 0;
    const uint64_t caller0 = preemptions();
    for (int i = 0; i < kTasks; ++i) {
        acc.offload(i);
        busy_for(std::chrono::microseconds(100));
        while (acc.try_get_result(r)) ++results;
    }
    const uint64_t excused = preemptions() - caller0;
    acc.end_of_stream();
    while (acc.get_result(r)) ++results;
    EXPECT_EQ(results, kTasks);
    const auto waits = acc.worker_waits();
    ASSERT_EQ(waits.size(), 1u);
    const uint64_t allowed = kTasks / 10 + excused + worker_preempted.load(std::memory_order_relaxed);
    EXPECT_LT(waits[0].parks, allowed) << "the worker parked between tasks 100 us apart (" << excused
                                       << " caller and " << worker_preempted.load() << " worker preemptions)";
}

// A parked worker is woken by the offload that gives it work (the fence-free doorbell: the
// caller rings without a fence, the parking worker pays with membarrier). Each round waits
// until the worker has announced a park, then offloads: a wake-up lost leaves the task until
// the worker's park times out (2 ms), which park_timeouts counts. Judged by that count, not
// by the round trip's time: on a loaded machine a woken worker may wait for a CPU longer
// than the timeout without any wake-up being lost.
TEST(Accelerator, AnOffloadWakesAParkedWorkerWithoutWaitingForItsParkTimeout) {
    AcceleratorOptions o;
    o.workers = 1;
    Accelerator<int> acc(o, [](int& x) { ++x; });
    constexpr int kRounds = 21;
    int r = 0, slept_out = 0;
    for (int i = 0; i < kRounds; ++i) {
        // relaxed counters, read while the worker runs: they only grow.
        const uint64_t parks0 = acc.worker_waits()[0].parks;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (acc.worker_waits()[0].parks == parks0) {
            ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "round " << i << ": the idle worker never parked";
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        const uint64_t timeouts0 = acc.worker_waits()[0].park_timeouts;
        acc.offload(i);
        ASSERT_TRUE(acc.get_result(r));
        EXPECT_EQ(r, i + 1);
        slept_out += acc.worker_waits()[0].park_timeouts != timeouts0;
    }
    acc.end_of_stream();
    EXPECT_FALSE(acc.get_result(r));
    // A round whose offload was late (the caller preempted for 2 ms after seeing the park)
    // may see an idle timeout too; a lost wake-up shows in every round.
    EXPECT_LE(slept_out, kRounds / 2) << "in " << slept_out << " of " << kRounds
                                      << " rounds the parked worker slept out its timeout: wake-ups lost";
}

// Streaming tiny tasks, a worker pauses after each short burst so that more gather; a caller
// that fills its queue meanwhile waits for room, and the worker must stop pausing then (the
// queue is as full as a pause can make it), not leave both waiting out the pause.
TEST(Accelerator, AWorkerStopsPausingWhenTheCallerWaitsForRoom) {
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    if (CPU_COUNT(&set) < 2) GTEST_SKIP() << "needs 2 CPUs (one for the caller, one for the worker)";
    AcceleratorOptions o;
    o.workers = 1;
    o.capacity = 128;  // the least that pauses (4 bursts): the caller fills it in a few us
    Accelerator<int> acc(o, [](int& x) { ++x; });
    int r = 0;
    uint64_t offloaded = 0, results = 0;
    // Streams until a wait for room found the worker pausing (within the first 100,000 tasks
    // on a 2-CPU VM, under ThreadSanitizer too), 4M tasks at most. No blocking get_result meanwhile: only waits for room can cut.
    AcceleratorWaits streaming;
    for (int chunk = 0; chunk < 40 && streaming.pauses_cut == 0; ++chunk) {
        for (int i = 0; i < 100000; ++i, ++offloaded) {
            acc.offload(i);
            while (acc.try_get_result(r)) ++results;
        }
        streaming = acc.worker_waits()[0];
    }
    acc.end_of_stream();
    while (acc.get_result(r)) ++results;
    EXPECT_EQ(results, offloaded);
    ASSERT_GT(streaming.pauses, 0u) << "the worker never paused for tiny tasks";
    EXPECT_GT(streaming.pauses_cut, 0u) << "in " << streaming.pauses
                                        << " pauses the caller never found the worker pausing while it waited for room";
    EXPECT_LE(acc.worker_waits()[0].pauses_cut, acc.worker_waits()[0].pauses);
}

TEST(Accelerator, InPlaceFunctionMakesTheTaskItsOwnResult) {
    AcceleratorOptions o;
    o.collection = ResultOrder::ordered;
    Accelerator<std::string> acc(o, [](std::string& s) { s += "!"; });
    acc.offload("a");
    acc.offload("b");
    acc.end_of_stream();
    std::string r;
    ASSERT_TRUE(acc.get_result(r));
    EXPECT_EQ(r, "a!");
    ASSERT_TRUE(acc.get_result(r));
    EXPECT_EQ(r, "b!");
    EXPECT_FALSE(acc.get_result(r));
}

TEST(Accelerator, ResultsStayReadableAfterWait) {
    AcceleratorOptions o;
    o.workers = 2;
    o.collection = ResultOrder::ordered;
    Accelerator<int, long> acc(o, [](int x) { return long{x} * 2; });
    for (int i = 0; i < 1000; ++i) acc.offload(i);
    acc.wait();  // offloads end of stream itself
    long r = 0;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_TRUE(acc.get_result(r));
        ASSERT_EQ(r, long{i} * 2);
    }
    EXPECT_FALSE(acc.get_result(r));
}

TEST(Accelerator, TryOffloadRefusesWhenFullAndKeepsTheTask) {
    AcceleratorOptions o;
    o.workers = 1;
    o.capacity = 1;
    o.dispatch = TaskDispatch::round_robin;
    Accelerator<std::string> acc(o, [](std::string& s) { s += "+"; });
    std::string first = "first";
    ASSERT_TRUE(acc.try_offload(first));
    // One slot, and try_offload may move the finished result aside only when there is one:
    // keep trying until it is accepted; a refused task must be left intact each time.
    std::string second = "second";
    while (!acc.try_offload(second)) {
        ASSERT_EQ(second, "second");
        std::this_thread::yield();
    }
    acc.end_of_stream();
    std::string r;
    ASSERT_TRUE(acc.get_result(r));
    EXPECT_EQ(r, "first+");
    ASSERT_TRUE(acc.get_result(r));
    EXPECT_EQ(r, "second+");
    EXPECT_FALSE(acc.get_result(r));
}

// Two workers holding two tasks each, round robin, adding 1000 to each task; task 0 holds
// its worker until release(), which the destructor calls first (also when an assertion
// failed: joining that worker must not hang).
struct FirstTaskStalls {
    explicit FirstTaskStalls(ResultOrder collection) : acc(options(collection), [this](int& x) {
        if (x == 0)
            while (!released.load(std::memory_order_acquire)) std::this_thread::yield();
        x += 1000;
    }) {}
    ~FirstTaskStalls() { release(); }
    FirstTaskStalls(const FirstTaskStalls&) = delete;
    FirstTaskStalls& operator=(const FirstTaskStalls&) = delete;
    void release() { released.store(true, std::memory_order_release); }
    static AcceleratorOptions options(ResultOrder collection) {
        AcceleratorOptions o;
        o.workers = 2;
        o.capacity = 2;
        o.dispatch = TaskDispatch::round_robin;
        o.collection = collection;
        return o;
    }
    std::atomic<bool> released{false};  // before acc: its workers read it
    Accelerator<int> acc;
};

// Round robin passes over a worker that has no room: one worker stuck on a long task (or off
// its CPU) must not stall the caller while another worker is free. Strict i mod N dispatch
// would refuse every offload once the stuck worker's turn came with its queue full.
TEST(Accelerator, RoundRobinPassesOverAWorkerWithNoRoom) {
    FirstTaskStalls farm(ResultOrder::unordered);
    Accelerator<int>& acc = farm.acc;
    acc.offload(0);  // worker 0 holds it until released
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::vector<int> got;
    int r = 0;
    for (int i = 1; i <= 200; ++i) {
        int task = i;
        while (!acc.try_offload(task)) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "task " << i << " never found room";
            while (acc.try_get_result(r)) got.push_back(r);
            std::this_thread::yield();
        }
        while (acc.try_get_result(r)) got.push_back(r);
    }
    farm.release();
    acc.end_of_stream();
    while (acc.get_result(r)) got.push_back(r);
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), 201u);
    for (int i = 0; i <= 200; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], i + 1000);
}

// Ordered collection keeps strict turns: results behind a stalled worker's cannot be
// returned, so the caller stops at that worker's turn instead of piling the other workers'
// results up without bound.
TEST(Accelerator, OrderedRoundRobinWaitsForAStalledWorkersTurn) {
    FirstTaskStalls farm(ResultOrder::ordered);
    Accelerator<int>& acc = farm.acc;
    int accepted = 0;
    int r = 0;
    for (int attempt = 0; attempt < 2000 && accepted < 100; ++attempt) {
        int task = accepted;
        if (acc.try_offload(task)) ++accepted;
        EXPECT_FALSE(acc.try_get_result(r)) << "a result overtook task 0";
        std::this_thread::yield();
    }
    // Job 0 holds worker 0: tasks 0 and 2 fill it, 1 and 3 go to worker 1, and task 4 waits for
    // worker 0's turn.
    EXPECT_EQ(accepted, 4);
    farm.release();
    for (int i = accepted; i < 10; ++i) acc.offload(i);
    acc.end_of_stream();
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(acc.get_result(r));
        EXPECT_EQ(r, i + 1000);
    }
    EXPECT_FALSE(acc.get_result(r));
}

TEST(Accelerator, OffloadAfterEndOfStreamIsAnError) {
    Accelerator<int> acc(AcceleratorOptions{}, [](int& x) { ++x; });
    acc.offload(1);
    acc.end_of_stream();
    EXPECT_THROW(acc.offload(2), AcceleratorError);
    int x = 3;
    EXPECT_THROW(acc.try_offload(x), AcceleratorError);
    EXPECT_THROW(acc.end_of_stream(), AcceleratorError);
    int r = 0;
    ASSERT_TRUE(acc.get_result(r));
    EXPECT_EQ(r, 2);
    EXPECT_FALSE(acc.get_result(r));
    acc.wait();
}

TEST(Accelerator, GetResultWithNothingInFlightAndNoEndOfStreamIsAnErrorNotAHang) {
    Accelerator<int> acc(AcceleratorOptions{}, [](int& x) { ++x; });
    int r = 0;
    EXPECT_FALSE(acc.try_get_result(r));
    EXPECT_THROW(acc.get_result(r), AcceleratorError);
    acc.offload(1);
    ASSERT_TRUE(acc.get_result(r));
    EXPECT_EQ(r, 2);
    try {
        acc.get_result(r);
        FAIL() << "expected an error";
    } catch (const AcceleratorError& e) {
        EXPECT_NE(std::string(e.what()).find("end_of_stream"), std::string::npos) << e.what();
    }
}

// A worker that throws fails the accelerator: the caller's next get_result and wait() say
// which worker failed and what it threw; nothing waits forever.
TEST(Accelerator, WorkerFailureReachesGetResultAndWaitNamingTheWorker) {
    AcceleratorOptions o;
    o.workers = 2;
    o.dispatch = TaskDispatch::round_robin;
    o.collection = ResultOrder::ordered;
    Accelerator<int> acc(o, [](int& x) {
        if (x == 5) throw std::runtime_error("task five is bad");
    });
    for (int i = 0; i < 10; ++i) acc.offload(i);  // task 5 goes to worker 1 (round robin)
    acc.end_of_stream();
    int r = 0;
    std::string what;
    try {
        while (acc.get_result(r)) ASSERT_LT(r, 5);  // results before the failure may come back
        FAIL() << "get_result ended without reporting the failure";
    } catch (const AcceleratorError& e) {
        what = e.what();
    }
    EXPECT_NE(what.find("worker 1"), std::string::npos) << what;
    EXPECT_NE(what.find("task five is bad"), std::string::npos) << what;
    EXPECT_THROW(acc.wait(), AcceleratorError);
    EXPECT_THROW(acc.get_result(r), AcceleratorError);
}

TEST(Accelerator, WaitReportsAFailureEvenWhenNoResultWasRead) {
    AcceleratorOptions o;
    o.workers = 1;
    Accelerator<int> acc(o, [](int&) { throw 42; });
    acc.offload(1);
    try {
        acc.wait();
        FAIL() << "expected an error";
    } catch (const AcceleratorError& e) {
        EXPECT_NE(std::string(e.what()).find("accelerator worker 0 of 1 failed: an exception that is not a std::exception"),
                  std::string::npos)
            << e.what();
    }
    int x = 0;
    EXPECT_THROW(acc.offload(x), AcceleratorError);
}

TEST(Accelerator, BadOptionsAreRefusedWithTheirName) {
    AcceleratorOptions o;
    o.workers = 0;
    EXPECT_THROW((Accelerator<int>(o, [](int&) {})), std::invalid_argument);
    o = AcceleratorOptions{};
    o.transport = "carrier_pigeon";
    try {
        Accelerator<int> acc(o, [](int&) {});
        FAIL() << "expected an error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("carrier_pigeon"), std::string::npos) << e.what();
    }
    o = AcceleratorOptions{};
    o.cpus = {0};
    EXPECT_THROW((Accelerator<int>(o, [](int&) {})), std::invalid_argument);
    // A CPU the process may not run on is an error, not a worker left floating unnoticed.
    o.cpus = {0, 4095};
    try {
        Accelerator<int> acc(o, [](int&) {});
        FAIL() << "expected an error";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("CPU 4095"), std::string::npos) << e.what();
    }
}

// Dropping an accelerator with tasks in flight and no end of stream: the destructor stops the
// workers (a task being run finishes; the tasks queued behind it are dropped, not run), returns
// promptly and frees every task. Job 0 holds the only worker until the destruction began,
// with tasks 1-10 queued behind it.
TEST(Accelerator, DestroyingWithoutWaitStopsTheWorkersAndFreesTheQueuedTasks) {
    using clock = std::chrono::steady_clock;
    const auto token = std::make_shared<int>(0);  // every task holds a copy: use_count counts them
    std::atomic<int> ran{0};
    std::atomic<bool> entered{false};
    std::atomic<int64_t> destroying_at{0};  // clock ticks, 0 before
    AcceleratorOptions o;
    o.workers = 1;
    o.capacity = 16;
    auto acc = std::make_unique<Accelerator<std::shared_ptr<int>>>(o, [&](std::shared_ptr<int>&) {
        if (!entered.exchange(true)) {
            // Until the destructor is surely past its stop request (it then joins this worker).
            const auto since = [&] { return clock::now().time_since_epoch().count() - destroying_at.load(); };
            while (destroying_at.load() == 0 || since() < std::chrono::nanoseconds(std::chrono::milliseconds(200)).count())
                std::this_thread::yield();
        }
        ran.fetch_add(1);
    });
    acc->offload(token);
    for (auto until = clock::now() + std::chrono::seconds(30); !entered.load();) {
        ASSERT_LT(clock::now(), until) << "the worker never took task 0";
        std::this_thread::yield();
    }
    for (int i = 1; i <= 10; ++i) acc->offload(token);
    EXPECT_EQ(token.use_count(), 12);
    std::atomic<bool> destroyed{false};
    std::thread destroyer([&] {
        destroying_at.store(clock::now().time_since_epoch().count());
        acc.reset();
        destroyed.store(true);
    });
    // Bounded: a destructor that waited for the queued tasks' results, or for an end of stream
    // that never comes, would not return.
    for (auto until = clock::now() + std::chrono::seconds(30); !destroyed.load() && clock::now() < until;)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!destroyed.load()) {
        ADD_FAILURE() << "the destructor has not returned after 30 s";
        std::abort();  // the worker cannot be joined: end here, not at the test's 600 s timeout
    }
    destroyer.join();
    EXPECT_EQ(ran.load(), 1) << "the tasks queued behind task 0 ran";
    EXPECT_EQ(token.use_count(), 1) << "tasks left behind by the destructor";
}

}  // namespace
}  // namespace tp
