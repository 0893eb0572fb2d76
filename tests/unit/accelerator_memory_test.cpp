// The accelerator's memory policy (AcceleratorOptions::memory): where allocate() puts a task's
// buffer, checked on what the kernel reports (the area's recorded policy through
// get_mempolicy, the pages' nodes through move_pages) and on which thread faulted the pages
// in (its own minor-fault count), and the options a host cannot honour refused.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/memory_binding.hpp"
#include "tilepipe/accelerator.hpp"

namespace tp {

// GoogleTest prints a place as its description (found by argument-dependent lookup).
void PrintTo(const MemoryPlace& p, std::ostream* os) { *os << describe(p); }

namespace {

struct Fill {
    AcceleratorBuffer* buffer = nullptr;
    long faults = 0;  // minor faults the worker's thread took writing it
};

long thread_minor_faults() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

// Writes every byte of the task's buffer on the worker, counting the worker's page faults.
void fill(Fill& f) {
    const long before = thread_minor_faults();
    std::memset(f.buffer->data(), 0x5a, f.buffer->size());
    f.faults = thread_minor_faults() - before;
}

// Up to two workers, pinned to CPUs of this process (explicit cpus pin them even when the
// CPUs are shared with the caller).
AcceleratorOptions pinned(const std::string& memory) {
    const std::vector<int> cpus = allowed_cpus();
    AcceleratorOptions o;
    o.workers = static_cast<unsigned>(std::min<size_t>(2, cpus.size()));
    o.cpus.assign(cpus.begin(), cpus.begin() + o.workers);
    o.collection = ResultOrder::ordered;  // strict turns: task t runs on worker t % workers
    o.memory = memory;
    return o;
}

// Runs fill() on each buffer, task t the t-th offload; returns each task's fault count.
std::vector<long> fill_on_workers(Accelerator<Fill>& acc, std::vector<AcceleratorBuffer>& buffers) {
    for (AcceleratorBuffer& b : buffers) acc.offload(Fill{&b});
    acc.end_of_stream();
    std::vector<long> faults;
    Fill f;
    while (acc.get_result(f)) faults.push_back(f.faults);
    return faults;
}

constexpr size_t kPages = 8;

TEST(AcceleratorMemory, LocalBindsEachTasksBufferToItsWorkersNode) {
    const AcceleratorOptions o = pinned("local");
    Accelerator<Fill> acc(o, fill);
    std::vector<AcceleratorBuffer> buffers;
    for (uint64_t t = 0; t < 4; ++t) {
        buffers.push_back(acc.allocate(kPages * page_size(), t));
        const MemoryPlace want{MemoryPolicy::Local, {numa_node_of_cpu(o.cpus[t % o.workers])}};
        EXPECT_EQ(area_policy(buffers[t].data(), buffers[t].size()), want)
            << "task " << t << ": " << describe(area_policy(buffers[t].data(), buffers[t].size()));
        EXPECT_EQ(acc.placement(t), describe(want));
    }
    fill_on_workers(acc, buffers);
    for (uint64_t t = 0; t < 4; ++t)
        EXPECT_EQ(area_nodes(buffers[t].data(), buffers[t].size()), std::vector<int>{numa_node_of_cpu(o.cpus[t % o.workers])});
}

TEST(AcceleratorMemory, InterleaveSpreadsPagesOverTheWorkersNodes) {
    const AcceleratorOptions o = pinned("interleave");
    std::vector<int> nodes;
    for (int cpu : o.cpus) nodes.push_back(numa_node_of_cpu(cpu));
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    Accelerator<Fill> acc(o, fill);
    const MemoryPlace want{MemoryPolicy::Interleave, nodes};
    for (uint64_t t = 0; t < 3; ++t) {
        AcceleratorBuffer b = acc.allocate(kPages * page_size(), t);
        EXPECT_EQ(area_policy(b.data(), b.size()), want) << describe(area_policy(b.data(), b.size()));
        EXPECT_EQ(acc.placement(t), describe(want));
    }
}

// first_touch binds nothing and touches nothing: the pages are faulted in, and so placed, by
// the worker writing them, on its node.
TEST(AcceleratorMemory, FirstTouchLeavesThePagesToTheWorkerThatWritesThem) {
    const AcceleratorOptions o = pinned("first_touch");
    Accelerator<Fill> acc(o, fill);
    std::vector<AcceleratorBuffer> buffers;
    for (uint64_t t = 0; t < 4; ++t) buffers.push_back(acc.allocate(kPages * page_size(), t));
    // No page faulted in yet (the caller's own fault count would not tell: under a sanitizer
    // its shadow memory faults too).
    for (const AcceleratorBuffer& b : buffers) {
        EXPECT_EQ(area_policy(b.data(), b.size()), MemoryPlace{});
        EXPECT_TRUE(area_nodes(b.data(), b.size()).empty()) << "pages placed before any task wrote them";
    }
    EXPECT_EQ(acc.placement(3), "first_touch");
    const std::vector<long> faults = fill_on_workers(acc, buffers);
    ASSERT_EQ(faults.size(), 4u);
    for (uint64_t t = 0; t < 4; ++t) {
        EXPECT_GE(faults[t], long(kPages)) << "task " << t << ": its worker did not fault its pages in";
        EXPECT_EQ(area_nodes(buffers[t].data(), buffers[t].size()), std::vector<int>{numa_node_of_cpu(o.cpus[t % o.workers])});
    }
}

// Floating workers have no node of their own: `local` binds to the process's one node when
// its CPUs are all on one, and is refused otherwise.
TEST(AcceleratorMemory, LocalWithFloatingWorkersNeedsOneNode) {
    AcceleratorOptions o;
    o.workers = 2;
    o.pin = false;
    o.memory = "local";
    std::vector<int> nodes;
    for (int cpu : allowed_cpus()) nodes.push_back(numa_node_of_cpu(cpu));
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (nodes.size() == 1) {
        Accelerator<Fill> acc(o, fill);
        AcceleratorBuffer b = acc.allocate(page_size(), 1);
        EXPECT_EQ(area_policy(b.data(), b.size()), (MemoryPlace{MemoryPolicy::Local, nodes}));
        return;
    }
    try {
        Accelerator<Fill> acc(o, fill);
        FAIL() << "local accepted with floating workers over several NUMA nodes";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("worker 0 is not pinned"), std::string::npos) << e.what();
    }
}

TEST(AcceleratorMemory, UnknownPolicyIsRefusedNamingTheKnownOnes) {
    AcceleratorOptions o;
    o.memory = "hash_for_home";
    try {
        Accelerator<Fill> acc(o, fill);
        FAIL() << "an unknown memory policy was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "accelerator: unknown memory 'hash_for_home' (known: local, interleave, first_touch)");
    }
}

// A buffer owns its pages: it moves, outlives its accelerator, and an empty one maps nothing.
TEST(AcceleratorMemory, BuffersOwnTheirPages) {
    AcceleratorBuffer kept;
    {
        Accelerator<Fill> acc(pinned("local"), fill);
        AcceleratorBuffer b = acc.allocate(100, 0);
        ASSERT_NE(b.data(), nullptr);
        EXPECT_EQ(b.size(), 100u);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % page_size(), 0u);
        kept = std::move(b);
        EXPECT_EQ(b.data(), nullptr);
        EXPECT_EQ(acc.allocate(0, 0).data(), nullptr);
    }
    kept.as<char>()[99] = 1;  // still mapped after the accelerator is gone
    EXPECT_EQ(area_policy(kept.data(), kept.size()).policy, MemoryPolicy::Local);
}

}  // namespace
}  // namespace tp
