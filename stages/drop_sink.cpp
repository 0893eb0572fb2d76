#include "stages/drop_sink.hpp"

#include <rte_mbuf.h>

#include <stdexcept>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

void DropSink::open(StageEnv& env) {
    if (env.pool == nullptr) throw std::logic_error("drop sink opened without a packet pool");
    pool_ = env.pool->get();
}

void DropSink::process(Burst& b) {
    void* simple[kBurstMax];
    rte_mbuf* other[kBurstMax];
    unsigned ns = 0, no = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        if (b.d[i].length != PacketDesc::kLengthSaturated) simple[ns++] = b.d[i].mbuf;
        else other[no++] = b.d[i].mbuf;
    }
    release_to_pool(reinterpret_cast<rte_mbuf* const*>(simple), ns);
    if (ns != 0) rte_mempool_put_bulk(pool_, simple, ns);  // one put for the burst, headers untouched
    if (no != 0) free_packets(other, no);
    b.n = 0;
}

TILEPIPE_STAGE(DropSink, "drop", "sink: free every packet, counting it as delivered");

}  // namespace tp
