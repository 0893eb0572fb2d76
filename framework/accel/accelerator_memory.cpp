// AcceleratorOptions::memory (include/tilepipe/accelerator.hpp): the apps' `memory:` words
// (framework/config/memory_settings.hpp) read for an accelerator's workers, and the buffers
// allocate() hands out: fresh anonymous mappings, so a buffer's pages are its own and none
// was placed before the policy is, bound with the apps' bind_area (mbind through hwloc).
#include "framework/accel/accelerator_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "framework/config/memory_settings.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/memory_binding.hpp"

namespace tp::detail {

namespace {

size_t whole_pages(size_t bytes) { return (bytes + page_size() - 1) & ~(page_size() - 1); }

std::string join(const std::vector<int>& v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
}

// The NUMA nodes of `cpus`, ascending; throws naming the CPU hwloc cannot place.
std::vector<int> nodes_of_cpus(const std::vector<int>& cpus, const std::string& memory) {
    std::vector<int> nodes;
    for (int cpu : cpus) {
        const int node = numa_node_of_cpu(cpu);
        if (node < 0)
            throw std::invalid_argument("accelerator: memory " + memory + " needs the NUMA node of CPU " +
                                        std::to_string(cpu) + ", which hwloc does not know on this host");
        nodes.push_back(node);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
}

}  // namespace

std::vector<int> accelerator_worker_cpus(const AcceleratorOptions& o, const std::vector<int>& allowed) {
    const bool shared = allowed.size() < o.workers + 1;  // the caller counts as a thread
    std::vector<int> cpus(o.workers, -1);
    if (!o.pin) return cpus;
    for (unsigned i = 0; i < o.workers; ++i) cpus[i] = !o.cpus.empty() ? o.cpus[i] : (shared ? -1 : allowed[i + 1]);
    return cpus;
}

struct AcceleratorMemory::Impl {
    std::vector<MemoryPlace> places;  // per worker; one (every worker's) unless `local`
};

AcceleratorMemory::AcceleratorMemory(const AcceleratorOptions& o) : impl_(std::make_unique<Impl>()) {
    AcceleratorCore::slots_for(o);  // the other options' errors first: the checks below rely on them
    const std::optional<MemoryPolicy> policy = memory_policy_named(o.memory);
    if (!policy)
        throw std::invalid_argument("accelerator: unknown memory '" + o.memory + "' (known: " + memory_policy_names() + ")");
    if (*policy == MemoryPolicy::FirstTouch) {
        impl_->places.push_back({});
        return;
    }
    // A kernel without NUMA policies (or a sandbox refusing them) fails here, not at the
    // first allocate().
    try {
        (void)thread_policy();
    } catch (const std::runtime_error& e) {
        throw std::invalid_argument("accelerator: memory " + o.memory + " needs the kernel's NUMA policies: " + e.what());
    }
    const std::vector<int> allowed = allowed_cpus();
    const std::vector<int> cpus = accelerator_worker_cpus(o, allowed);
    // A floating worker may run on any CPU of the process: its memory has no one node.
    const std::vector<int> anywhere = nodes_of_cpus(allowed, o.memory);
    std::vector<std::vector<int>> nodes;
    for (unsigned w = 0; w < o.workers; ++w) nodes.push_back(cpus[w] >= 0 ? nodes_of_cpus({cpus[w]}, o.memory) : anywhere);
    if (*policy == MemoryPolicy::Interleave) {
        std::vector<int> all;
        for (const auto& n : nodes) all.insert(all.end(), n.begin(), n.end());
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        impl_->places.push_back({MemoryPolicy::Interleave, all});
        return;
    }
    for (unsigned w = 0; w < o.workers; ++w) {
        if (nodes[w].size() != 1)
            throw std::invalid_argument("accelerator: memory local puts a task's buffers on its worker's NUMA node, but worker " +
                                        std::to_string(w) + " is not pinned and this process runs on the CPUs of nodes " +
                                        join(nodes[w]) + " (pin the workers: `cpus`, or fewer workers than CPUs)");
        impl_->places.push_back({MemoryPolicy::Local, nodes[w]});
    }
}

AcceleratorMemory::~AcceleratorMemory() = default;

AcceleratorBuffer AcceleratorMemory::allocate(size_t bytes, uint64_t task) const {
    if (bytes == 0) return {};
    const size_t len = whole_pages(bytes);
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw AcceleratorError("accelerator: cannot map " + std::to_string(bytes) + " bytes for task " + std::to_string(task) +
                               ": " + std::strerror(errno));
    AcceleratorBuffer b(p, bytes);  // unmapped again if the binding fails
    const MemoryPlace& place = impl_->places[task % impl_->places.size()];
    if (place.policy != MemoryPolicy::FirstTouch) {
        const std::string error = bind_area(p, len, place);
        if (!error.empty())
            throw AcceleratorError("accelerator: cannot place task " + std::to_string(task) + "'s " + std::to_string(bytes) +
                                   " bytes (" + describe(place) + "): " + error);
    }
    return b;
}

std::string AcceleratorMemory::placement(uint64_t task) const {
    return describe(impl_->places[task % impl_->places.size()]);
}

}  // namespace tp::detail

namespace tp {

AcceleratorBuffer::~AcceleratorBuffer() {
    if (data_ != nullptr) ::munmap(data_, detail::whole_pages(bytes_));
}

AcceleratorBuffer& AcceleratorBuffer::operator=(AcceleratorBuffer&& o) noexcept {
    if (this != &o) {
        if (data_ != nullptr) ::munmap(data_, detail::whole_pages(bytes_));
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}

}  // namespace tp
