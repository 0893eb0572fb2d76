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
#pragma once

#include <cstddef>

#include "framework/channel/detail/cache_line.hpp"

namespace tp::detail {

class NodeMemory {
public:
    NodeMemory(std::size_t bytes, int socket);  // socket < 0: any node
    ~NodeMemory();
    NodeMemory(const NodeMemory&) = delete;
    NodeMemory& operator=(const NodeMemory&) = delete;

    void* get() const { return p_; }
    bool on_dpdk_heap() const { return dpdk_; }

private:
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
    bool dpdk_ = false;
};

}  // namespace tp::detail
