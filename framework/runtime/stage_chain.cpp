#include "framework/runtime/stage_chain.hpp"

#include <rte_cycles.h>

#include "framework/runtime/latency_probe.hpp"
#include "framework/runtime/packet_trace.hpp"

namespace tp {

uint64_t burst_bytes(const Burst& b) {
    uint64_t bytes = 0;
    // A simple mbuf's length is in its descriptor: only a saturated one costs a call and a
    // read of its mbuf (this runs for every burst at every stage).
    for (const auto& d : b) bytes += d.length != PacketDesc::kLengthSaturated ? d.length : frame_length(d);
    return bytes;
}

namespace {
// Notes a stage's drops while process() runs, also when it throws: a sink's for the latency
// probe, and every stage's while packets are traced (then copied to the probe's list).
struct NotingDrops {
    Stage& stage;
    SinkLatency* latency;
    DroppedPackets* traced;
    NotingDrops(Stage& st, SinkLatency* l, DroppedPackets* t) : stage(st), latency(l), traced(t) {
        if (traced != nullptr) StageRuntime::note_drops_into(stage, traced);
        else if (latency != nullptr) StageRuntime::note_drops_into(stage, &latency->dropped());
    }
    ~NotingDrops() {
        if (traced == nullptr && latency == nullptr) return;
        StageRuntime::note_drops_into(stage, nullptr);
        if (traced == nullptr || latency == nullptr) return;
        DroppedPackets& to = latency->dropped();
        for (uint16_t k = 0; k < traced->n && to.n < kBurstMax; ++k) to.mbuf[to.n++] = traced->mbuf[k];
    }
    NotingDrops(const NotingDrops&) = delete;
    NotingDrops& operator=(const NotingDrops&) = delete;
};
}  // namespace

void run_stage_chain(std::span<Stage* const> chain, Burst& b, SinkLatency* latency, NodeTrace* trace, size_t first) {
    for (size_t at = 0; at < chain.size(); ++at) {
        Stage* st = chain[at];
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
        // One look per burst: off, or once every traced packet has ended, nothing else runs.
        const bool tracing = trace != nullptr && trace->live();
        if (tracing) trace->before(b);
        const uint64_t t0 = rte_rdtsc();
        {
            NotingDrops noting(*st, sink ? latency : nullptr, tracing ? &trace->dropped() : nullptr);
            st->process(b);
        }
        const uint64_t t1 = rte_rdtsc();
        if (tracing) trace->after(b, static_cast<uint16_t>(first + at), sink, t1);
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
