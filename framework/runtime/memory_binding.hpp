// Memory binding: where the pages of an area, or of what a thread allocates next, may live, as
// NUMA policies the kernel enforces (mbind / set_mempolicy, through hwloc).
//
// The policies (the `memory:` setting, framework/config/memory_settings.hpp):
//  - FirstTouch: the kernel's default; a page lands on the node of the thread that first
//    writes it. Binding it clears an earlier policy (pages already placed stay).
//  - Local: bound to `nodes` (the consumer's node); pages already elsewhere are moved there.
//  - Interleave: spread page by page, round robin, across `nodes`; placed pages are moved.
// Areas are widened to whole pages: a bound area should own its pages (NodeMemory page-aligns
// what it binds), or its neighbours on the same first and last page get its policy too.
// Thread-safety: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tp {

enum class MemoryPolicy : uint8_t { FirstTouch, Local, Interleave };

// "first_touch", "local", "interleave".
const char* memory_policy_name(MemoryPolicy p);

struct MemoryPlace {
    MemoryPolicy policy = MemoryPolicy::FirstTouch;
    std::vector<int> nodes;  // OS NUMA node numbers (Local, Interleave); empty for FirstTouch
    bool operator==(const MemoryPlace&) const = default;
};

// "first_touch", "local on 0", "interleave on 0,1".
std::string describe(const MemoryPlace& p);

// The NUMA node of OS CPU `cpu`; -1 when hwloc does not know it.
int numa_node_of_cpu(int cpu);
// Every NUMA node of the host (OS numbers, ascending); {0} when hwloc cannot tell.
std::vector<int> host_numa_nodes();

size_t page_size();

// Why DPDK's hugepage memory is never bound (nor moved): devices DMA to the physical addresses
// DPDK recorded for its pages, so a moved page would take a NIC's writes elsewhere; it stays on
// the NUMA socket it was allocated on. The pool and channel binding report this instead.
extern const char* const kHugepagesStay;

// Binds the pages holding [addr, addr + len) to `place`, moving those already placed
// elsewhere. Returns "" or why the kernel refused.
std::string bind_area(const void* addr, size_t len, const MemoryPlace& place);

// The policy the kernel holds for the area, every page alike (throws std::runtime_error when
// the pages disagree or the query fails): what a test and `--log-level debug` check.
MemoryPlace area_policy(const void* addr, size_t len);
// The NUMA nodes the area's pages are on now (pages never touched are on none).
std::vector<int> area_nodes(const void* addr, size_t len);

// The calling thread's allocation policy (throws std::runtime_error when the query fails).
MemoryPlace thread_policy();

// Sets the calling thread's allocation policy to `place` for its lifetime, then restores the
// previous one: pages the thread first touches meanwhile (fresh heap, mmap) follow `place`.
class ThreadMemoryScope {
public:
    explicit ThreadMemoryScope(const MemoryPlace& place);
    ~ThreadMemoryScope();
    ThreadMemoryScope(const ThreadMemoryScope&) = delete;
    ThreadMemoryScope& operator=(const ThreadMemoryScope&) = delete;
    // "" when the policy is in force, else why not.
    const std::string& error() const { return error_; }

private:
    bool set_ = false;
    MemoryPlace previous_;
    std::string error_;
};

}  // namespace tp
