#include "framework/runtime/memory_binding.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tp {

namespace {

// One topology for the process, loaded on first use; hwloc's queries on a loaded topology
// are safe from any thread.
hwloc_topology_t topology() {
    static const hwloc_topology_t topo = [] {
        hwloc_topology_t t = nullptr;
        if (hwloc_topology_init(&t) != 0) return hwloc_topology_t{};
        if (hwloc_topology_load(t) != 0) {
            hwloc_topology_destroy(t);
            return hwloc_topology_t{};
        }
        return t;
    }();
    return topo;
}

struct Bitmap {
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    ~Bitmap() { hwloc_bitmap_free(b); }
    Bitmap() = default;
    Bitmap(const Bitmap&) = delete;
    Bitmap& operator=(const Bitmap&) = delete;
};

std::vector<int> nodes_of(hwloc_const_bitmap_t set) {
    std::vector<int> out;
    unsigned i = 0;
    hwloc_bitmap_foreach_begin(i, set) out.push_back(static_cast<int>(i));
    hwloc_bitmap_foreach_end();
    return out;
}

void fill(Bitmap& set, const std::vector<int>& nodes) {
    hwloc_bitmap_zero(set.b);
    for (int n : nodes) hwloc_bitmap_set(set.b, static_cast<unsigned>(n));
}

hwloc_membind_policy_t hwloc_policy(MemoryPolicy p) {
    switch (p) {
        case MemoryPolicy::Local: return HWLOC_MEMBIND_BIND;
        case MemoryPolicy::Interleave: return HWLOC_MEMBIND_INTERLEAVE;
        case MemoryPolicy::FirstTouch: break;
    }
    return HWLOC_MEMBIND_DEFAULT;  // MPOL_DEFAULT: first touch
}

MemoryPlace place_of(hwloc_membind_policy_t policy, hwloc_const_bitmap_t set) {
    switch (policy) {
        case HWLOC_MEMBIND_BIND: return {MemoryPolicy::Local, nodes_of(set)};
        case HWLOC_MEMBIND_INTERLEAVE: return {MemoryPolicy::Interleave, nodes_of(set)};
        case HWLOC_MEMBIND_FIRSTTOUCH:
        case HWLOC_MEMBIND_DEFAULT: return {MemoryPolicy::FirstTouch, {}};
        default: throw std::runtime_error("memory policy " + std::to_string(int(policy)) + " is none of tilepipe's");
    }
}

std::string error_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

const char* memory_policy_name(MemoryPolicy p) {
    switch (p) {
        case MemoryPolicy::Local: return "local";
        case MemoryPolicy::Interleave: return "interleave";
        case MemoryPolicy::FirstTouch: break;
    }
    return "first_touch";
}

std::string describe(const MemoryPlace& p) {
    std::string s = memory_policy_name(p.policy);
    for (size_t i = 0; i < p.nodes.size(); ++i) s += (i == 0 ? " on " : ",") + std::to_string(p.nodes[i]);
    return s;
}

int numa_node_of_cpu(int cpu) {
    hwloc_topology_t t = topology();
    if (t == nullptr || cpu < 0) return -1;
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t, static_cast<unsigned>(cpu));
    if (pu == nullptr || pu->nodeset == nullptr) return -1;
    return hwloc_bitmap_first(pu->nodeset);
}

std::vector<int> host_numa_nodes() {
    hwloc_topology_t t = topology();
    if (t == nullptr) return {0};
    std::vector<int> out = nodes_of(hwloc_topology_get_topology_nodeset(t));
    return out.empty() ? std::vector<int>{0} : out;
}

size_t page_size() {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

const char* const kHugepagesStay =
    "hugepage memory stays where DPDK allocated it (devices may DMA to the physical addresses it "
    "recorded), on the NUMA socket it was allocated on";

std::string bind_area(const void* addr, size_t len, const MemoryPlace& place) {
    hwloc_topology_t t = topology();
    if (t == nullptr) return "hwloc cannot read this host's topology";
    if (len == 0) return "";
    // Whole pages: the kernel binds pages, and wants the start aligned.
    const auto start = reinterpret_cast<uintptr_t>(addr) & ~(uintptr_t(page_size()) - 1);
    const size_t bytes = reinterpret_cast<uintptr_t>(addr) + len - start;
    Bitmap set;
    fill(set, place.nodes);
    if (place.policy == MemoryPolicy::FirstTouch) hwloc_bitmap_copy(set.b, hwloc_topology_get_topology_nodeset(t));
    const int flags = HWLOC_MEMBIND_BYNODESET | (place.policy == MemoryPolicy::FirstTouch ? 0 : HWLOC_MEMBIND_MIGRATE);
    if (place.policy != MemoryPolicy::FirstTouch && place.nodes.empty()) return "no NUMA node to bind to";
    if (hwloc_set_area_membind(t, reinterpret_cast<const void*>(start), bytes, set.b, hwloc_policy(place.policy), flags) != 0)
        return error_text("mbind");
    return "";
}

MemoryPlace area_policy(const void* addr, size_t len) {
    hwloc_topology_t t = topology();
    if (t == nullptr) throw std::runtime_error("hwloc cannot read this host's topology");
    Bitmap set;
    hwloc_membind_policy_t policy{};
    if (hwloc_get_area_membind(t, addr, len, set.b, &policy, HWLOC_MEMBIND_BYNODESET) != 0)
        throw std::runtime_error(error_text("get_mempolicy"));
    return place_of(policy, set.b);
}

std::vector<int> area_nodes(const void* addr, size_t len) {
    hwloc_topology_t t = topology();
    if (t == nullptr) throw std::runtime_error("hwloc cannot read this host's topology");
    Bitmap set;
    if (hwloc_get_area_memlocation(t, addr, len, set.b, HWLOC_MEMBIND_BYNODESET) != 0)
        throw std::runtime_error(error_text("move_pages"));
    return nodes_of(set.b);
}

MemoryPlace thread_policy() {
    hwloc_topology_t t = topology();
    if (t == nullptr) throw std::runtime_error("hwloc cannot read this host's topology");
    Bitmap set;
    hwloc_membind_policy_t policy{};
    if (hwloc_get_membind(t, set.b, &policy, HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0)
        throw std::runtime_error(error_text("get_mempolicy"));
    return place_of(policy, set.b);
}

ThreadMemoryScope::ThreadMemoryScope(const MemoryPlace& place) {
    hwloc_topology_t t = topology();
    if (t == nullptr) {
        error_ = "hwloc cannot read this host's topology";
        return;
    }
    Bitmap old;
    hwloc_membind_policy_t policy{};
    if (hwloc_get_membind(t, old.b, &policy, HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
        error_ = error_text("get_mempolicy");
        return;
    }
    try {
        previous_ = place_of(policy, old.b);
    } catch (const std::runtime_error& e) {
        error_ = e.what();  // a policy set outside tilepipe (numactl --preferred): leave it alone
        return;
    }
    Bitmap set;
    fill(set, place.nodes);
    if (place.policy == MemoryPolicy::FirstTouch) hwloc_bitmap_copy(set.b, hwloc_topology_get_topology_nodeset(t));
    if (hwloc_set_membind(t, set.b, hwloc_policy(place.policy), HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
        error_ = error_text("set_mempolicy");
        return;
    }
    set_ = true;
}

ThreadMemoryScope::~ThreadMemoryScope() {
    if (!set_) return;
    Bitmap set;
    fill(set, previous_.nodes);
    if (previous_.policy == MemoryPolicy::FirstTouch) hwloc_bitmap_copy(set.b, hwloc_topology_get_topology_nodeset(topology()));
    hwloc_set_membind(topology(), set.b, hwloc_policy(previous_.policy), HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
}

}  // namespace tp
