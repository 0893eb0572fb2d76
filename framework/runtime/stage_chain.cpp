#include "framework/runtime/stage_chain.hpp"

#include <rte_cycles.h>

namespace tp {

uint64_t burst_bytes(const Burst& b) {
    uint64_t bytes = 0;
    for (const auto& d : b) bytes += frame_length(d);
    return bytes;
}

void run_stage_chain(std::span<Stage* const> chain, Burst& b) {
    for (Stage* st : chain) {
        if (b.n == 0) return;
        StageStats& c = st->stats();
        const uint16_t n = b.n;
        c.in.add(n);
        c.bursts.inc();
        const bool sink = st->kind() == StageKind::Sink;
        const uint64_t drops_before = c.drops.get();
        const uint64_t bytes = sink ? burst_bytes(b) : 0;
        const uint64_t t0 = rte_rdtsc();
        st->process(b);
        c.cycles.add(rte_rdtsc() - t0);
        if (sink) {
            c.out.add(n - (c.drops.get() - drops_before));
            c.bytes_out.add(bytes);
            b.n = 0;
        } else {
            c.out.add(b.n);
        }
    }
}

}  // namespace tp
