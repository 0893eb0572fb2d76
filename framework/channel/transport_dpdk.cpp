#include "framework/channel/transport_dpdk.hpp"

#include <rte_errno.h>
#include <rte_memory.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "framework/channel/detail/capacity.hpp"
#include "framework/eal/eal_session.hpp"

namespace tp::detail {

rte_ring* dpdk_ring_create(uint32_t elem_size, uint32_t capacity, int socket) {
    checked_capacity("dpdk", capacity, false);
    if (!eal_started())
        throw std::invalid_argument("dpdk channel: DPDK EAL is not running (start it before building the channel)");
    // relaxed: the counter only has to hand out distinct numbers.
    static std::atomic<uint32_t> next{0};
    const std::string name = "tp_ch_" + std::to_string(next.fetch_add(1, std::memory_order_relaxed));
    const unsigned flags = RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ;
    rte_ring* r = rte_ring_create_elem(name.c_str(), elem_size, capacity, socket < 0 ? SOCKET_ID_ANY : socket, flags);
    if (r == nullptr && socket >= 0)
        r = rte_ring_create_elem(name.c_str(), elem_size, capacity, SOCKET_ID_ANY, flags);
    if (r == nullptr)
        throw std::runtime_error("dpdk channel: rte_ring_create_elem(" + std::to_string(capacity) +
                                 " slots) failed: " + rte_strerror(rte_errno));
    return r;
}

void dpdk_ring_free(rte_ring* r) { rte_ring_free(r); }

}  // namespace tp::detail
