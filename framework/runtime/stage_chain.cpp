#include "framework/runtime/stage_chain.hpp"

#include <rte_cycles.h>

#include "framework/runtime/latency_probe.hpp"

namespace tp {

uint64_t burst_bytes(const Burst& b) {
    uint64_t bytes = 0;
    // A simple mbuf's length is in its descriptor: only a saturated one costs a call and a
    // read of its mbuf (this runs for every burst at every stage).
    for (const auto& d : b) bytes += d.length != PacketDesc::kLengthSaturated ? d.length : frame_length(d);
    return bytes;
}

namespace {
// Notes the sink's drops for the latency probe while process() runs, also when it throws.
struct NotingDrops {
    Stage* stage;
    NotingDrops(Stage* st, SinkLatency* latency) : stage(latency != nullptr ? st : nullptr) {
        if (stage != nullptr) StageRuntime::note_drops_into(*stage, &latency->dropped());
    }
    ~NotingDrops() {
        if (stage != nullptr) StageRuntime::note_drops_into(*stage, nullptr);
    }
    NotingDrops(const NotingDrops&) = delete;
    NotingDrops& operator=(const NotingDrops&) = delete;
};
}  // namespace

void run_stage_chain(std::span<Stage* const> chain, Burst& b, SinkLatency* latency) {
    for (Stage* st : chain) {
        if (b.n == 0) return;
        StageStats& c = st->stats();
        const uint16_t n = b.n;
        c.in.add(n);
        c.bursts.inc();
        const bool sink = st->kind() == StageKind::Sink;
        const uint64_t drops_before = c.drops.get();
        const uint64_t bytes_in = sink ? burst_bytes(b) : 0;  // a sink leaves its burst empty
        const uint64_t dropped_bytes_before = StageRuntime::dropped_bytes(*st);
        if (sink && latency != nullptr) latency->pick(b);
        const uint64_t t0 = rte_rdtsc();
        {
            NotingDrops noting(sink ? st : nullptr, latency);
            st->process(b);
        }
        const uint64_t t1 = rte_rdtsc();
        c.cycles.add(t1 - t0);
        // The stage's own line: no other tile writes it (see StageStats).
        if (c.first_tsc.get() == 0) c.first_tsc.set(t1);
        c.last_tsc.set(t1);
        if (sink) {
            if (latency != nullptr) latency->record(t1);
            c.out.add(n - (c.drops.get() - drops_before));
            // What it delivered: the packets it dropped (a full TX ring, a failed write) are
            // in neither its `out` nor the headline's bytes.
            c.bytes_out.add(bytes_in - (StageRuntime::dropped_bytes(*st) - dropped_bytes_before));
            b.n = 0;
        } else {
            c.out.add(b.n);
            c.bytes_out.add(burst_bytes(b));
        }
    }
}

}  // namespace tp
