#include "tests/support/order_check.hpp"

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"

namespace tp::test {

uint32_t packet_index(const PacketDesc& d) {
    const auto* ip = rte_pktmbuf_mtod_offset(d.mbuf, const rte_ipv4_hdr*, sizeof(rte_ether_hdr));
    return rte_be_to_cpu_32(ip->src_addr) & 0xffff;
}

OrderCheckCounts& order_check_counts() {
    static OrderCheckCounts counts;
    return counts;
}

namespace {

class OrderCheck final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    explicit OrderCheck(const ParamValues&) : Stage(kKind) {}
    void process(Burst& b) override {
        OrderCheckCounts& c = order_check_counts();
        for (const PacketDesc& d : b) {
            const int64_t i = packet_index(d);
            if (i <= c.last.load()) c.out_of_order.fetch_add(1);
            c.last.store(i);
            c.seen.fetch_add(1);
            free_packet(d.mbuf);
        }
        b.n = 0;
    }
};
TILEPIPE_STAGE(OrderCheck, "test_order_check", "test: sink counting packets out of increasing index order");

}  // namespace
}  // namespace tp::test
