// NodeMemory: a zeroed block of memory placed on one NUMA node, owned (freed on destruction),
// aligned to and padded to kNoFalseSharing so that nothing else shares its first or last
// line pair. Channels put their slots on the receiver's node with it.
//
// Where it comes from:
//  - DPDK EAL running: rte_zmalloc_socket(socket), DPDK's per-node heap (hugepages when the
//    host has them); if that node has no room, any node.
//  - otherwise: aligned operator new, zeroed here. Linux places a page on the node of the
//    thread that first writes it (first touch), so the memory lands on the node of the thread
//    that built the channel; build channels on the receiver's node to get the same placement.
// While a NodeMemoryPlacement is open on the building thread, the block is also page-aligned,
// padded to whole pages and bound to that placement (the `memory:` setting): see below.
// Heap::Process skips DPDK's heap: for blocks with no socket to ask for (the messaging
// network's queues), which then stay bindable when DPDK's memory is hugepages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "framework/channel/detail/cache_line.hpp"
#include "framework/runtime/memory_binding.hpp"

namespace tp::detail {

class NodeMemory {
public:
    enum class Heap : unsigned char { Any, Process };
    NodeMemory(std::size_t bytes, int socket, Heap heap = Heap::Any);  // socket < 0: any node
    ~NodeMemory();
    NodeMemory(const NodeMemory&) = delete;
    NodeMemory& operator=(const NodeMemory&) = delete;

    void* get() const { return p_; }
    std::size_t bytes() const { return bytes_; }
    bool on_dpdk_heap() const { return dpdk_; }

private:
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
    std::size_t align_ = 0;
    bool dpdk_ = false;
};

// NodeMemory built on this thread while this lives is bound to `place` (framework/runtime/
// memory_binding.hpp): whole pages of its own, so binding one block never rebinds a
// neighbour's. Scopes do not nest. Setup only: an app binds its channels as it builds them.
class NodeMemoryPlacement {
public:
    struct Area {
        const void* addr;
        std::size_t bytes;
        std::string error;  // why the kernel refused the binding; empty when bound
    };
    explicit NodeMemoryPlacement(const MemoryPlace& place);
    ~NodeMemoryPlacement();
    NodeMemoryPlacement(const NodeMemoryPlacement&) = delete;
    NodeMemoryPlacement& operator=(const NodeMemoryPlacement&) = delete;

    const MemoryPlace& place() const { return place_; }
    // Every block bound while this was open.
    const std::vector<Area>& areas() const { return areas_; }

private:
    friend class NodeMemory;
    MemoryPlace place_;
    std::vector<Area> areas_;
};

}  // namespace tp::detail
