#include "framework/channel/detail/node_memory.hpp"

#include <rte_malloc.h>
#include <rte_memory.h>

#include <cstring>
#include <new>

#include "framework/eal/eal_session.hpp"

namespace tp::detail {

NodeMemory::NodeMemory(std::size_t bytes, int socket)
    : bytes_((bytes + kNoFalseSharing - 1) / kNoFalseSharing * kNoFalseSharing) {
    bytes = bytes_;
    if (eal_started()) {
        p_ = rte_zmalloc_socket("tp_channel", bytes, kNoFalseSharing, socket < 0 ? SOCKET_ID_ANY : socket);
        if (p_ == nullptr && socket >= 0) p_ = rte_zmalloc_socket("tp_channel", bytes, kNoFalseSharing, SOCKET_ID_ANY);
        dpdk_ = p_ != nullptr;
    }
    if (p_ == nullptr) {
        p_ = ::operator new(bytes, std::align_val_t{kNoFalseSharing});
        std::memset(p_, 0, bytes);
    }
}

NodeMemory::~NodeMemory() {
    if (dpdk_) rte_free(p_);
    else ::operator delete(p_, bytes_, std::align_val_t{kNoFalseSharing});
}

}  // namespace tp::detail
