#include "framework/channel/detail/node_memory.hpp"

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "framework/eal/eal_session.hpp"

namespace tp::detail {

namespace {
// The placement open on this thread (setup code only; never read on a hot path).
thread_local NodeMemoryPlacement* t_placement = nullptr;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// DPDK's heap hands a block one thread freed to another thread's allocation under its own
// spinlock, inside librte_eal, which ThreadSanitizer does not see: it took rte_free's memset
// and the next owner's first writes for a race. Taking this lock around both makes that
// hand-over visible. Channels are made and freed at setup and teardown only.
std::mutex& dpdk_heap_lock() {
    static std::mutex m;
    return m;
}
}  // namespace

NodeMemoryPlacement::NodeMemoryPlacement(const MemoryPlace& place) : place_(place) { t_placement = this; }

NodeMemoryPlacement::~NodeMemoryPlacement() { t_placement = nullptr; }

NodeMemory::NodeMemory(std::size_t bytes, int socket, Heap heap) {
    NodeMemoryPlacement* const placement = t_placement;
    // A bound block owns its pages: a policy covers whole pages.
    align_ = placement != nullptr ? std::max(page_size(), kNoFalseSharing) : kNoFalseSharing;
    bytes_ = round_up(bytes, align_);
    if (heap == Heap::Any && eal_started()) {
        std::lock_guard<std::mutex> lock(dpdk_heap_lock());
        p_ = rte_zmalloc_socket("tp_channel", bytes_, static_cast<unsigned>(align_), socket < 0 ? SOCKET_ID_ANY : socket);
        if (p_ == nullptr && socket >= 0)
            p_ = rte_zmalloc_socket("tp_channel", bytes_, static_cast<unsigned>(align_), SOCKET_ID_ANY);
        dpdk_ = p_ != nullptr;
    }
    if (p_ == nullptr) {
        p_ = ::operator new(bytes_, std::align_val_t{align_});
        std::memset(p_, 0, bytes_);
    }
    // DPDK's hugepage memory is never moved: devices may DMA to the physical addresses DPDK
    // recorded for it (memory_plan.hpp); it stays on the socket it was allocated on.
    if (placement != nullptr)
        placement->areas_.push_back({p_, bytes_,
                                     dpdk_ && rte_eal_has_hugepages() != 0 ? std::string(kHugepagesStay)
                                                                           : bind_area(p_, bytes_, placement->place_)});
}

NodeMemory::~NodeMemory() {
    if (dpdk_) {
        std::lock_guard<std::mutex> lock(dpdk_heap_lock());
        rte_free(p_);
    } else {
        ::operator delete(p_, bytes_, std::align_val_t{align_});
    }
}

}  // namespace tp::detail
