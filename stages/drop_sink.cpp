#include "stages/drop_sink.hpp"

#include <rte_mbuf.h>

#include "framework/stage/registry.hpp"

namespace tp {

void DropSink::process(Burst& b) {
    rte_mbuf* m[kBurstMax];
    for (uint16_t i = 0; i < b.n; ++i) m[i] = b.d[i].mbuf;
    rte_pktmbuf_free_bulk(m, b.n);  // one mempool put for the whole burst
    b.n = 0;
}

TILEPIPE_STAGE(DropSink, "drop", "sink: free every packet, counting it as delivered");

}  // namespace tp
