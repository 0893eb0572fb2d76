// What a node records when the run measures latency (LatencyConfig), all of it owned by the
// node's tile: nothing here is shared on the hot path. The runner reads it after the threads
// have joined (or live through LatencyHistogram's relaxed counters).
//
// EntryStamp: at a source's node, the packets that will be latency samples: one in `every` the
// source emits, by a countdown carried across bursts (no division per packet), so samples =
// emitted / every, rounded down, less those dropped on the way. Only those packets are
// written (their entry TSC and the mark of entry_sampled_flag()): with the default `sample 64`
// the source touches one packet in 64 instead of every one.
//
// SinkLatency: at a sink, now - entry stamp for each marked packet the sink receives, less the
// marked packets the sink itself dropped (noted through Stage::note_drops_into: a counted drop
// is never a sample). The marks are read before process(), which frees the mbufs (their first
// line, which holds ol_flags, is about to be read by the free anyway); the time recorded is
// taken after it, so the sink's own work is part of the latency.
//
// NodeResidence (`latency: all`): per packet, how long it waited between the previous node
// handing it on and this node taking it (queue wait: the channel, and any staging while the
// channel was full), and how long this node then worked on its burst before handing it on.
#pragma once

#include <cstdint>

#include "descriptors/burst.hpp"
#include "framework/metrics/latency_histogram.hpp"
#include "framework/metrics/packet_timestamp.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class EntryStamp {
public:
    explicit EntryStamp(uint32_t every)
        : offset_(entry_tsc_offset()), flag_(entry_sampled_flag()), every_(every), next_(every - 1) {}

    void stamp(const Burst& b, uint64_t now) {
        uint32_t i = next_;
        for (; i < b.n; i += every_) {
            rte_mbuf* m = b.d[i].mbuf;
            m->ol_flags |= flag_;
            packet_tsc(m, offset_) = now;
        }
        next_ = i - b.n;
    }

private:
    int offset_;
    uint64_t flag_;
    uint32_t every_;
    uint32_t next_;  // index, in the next burst, of the next sample
};

class SinkLatency {
public:
    SinkLatency() : offset_(entry_tsc_offset()), flag_(entry_sampled_flag()) {}

    void pick(const Burst& b) {
        picked_ = 0;
        dropped_.n = 0;
        for (const PacketDesc& d : b) {
            rte_mbuf* m = d.mbuf;
            if (m == nullptr || (m->ol_flags & flag_) == 0) continue;
            mbuf_[picked_] = m;
            stamp_[picked_++] = packet_tsc(m, offset_);
        }
    }
    DroppedPackets& dropped() { return dropped_; }
    void record(uint64_t now);

    const LatencyHistogram& histogram() const { return hist_; }

private:
    int offset_;
    uint64_t flag_;
    uint16_t picked_ = 0;
    const void* mbuf_[kBurstMax];
    uint64_t stamp_[kBurstMax];
    DroppedPackets dropped_;
    LatencyHistogram hist_;
};

struct NodeResidence {
    int offset = handoff_tsc_offset();
    LatencyHistogram queue_wait;
    LatencyHistogram process;

    void taken(const Burst& b, uint64_t now) {
        for (const PacketDesc& d : b)
            if (d.mbuf != nullptr) queue_wait.record(since(packet_tsc(d.mbuf, offset), now));
    }
    void handed_on(Burst& b, uint64_t taken_at, uint16_t taken, uint64_t now) {
        if (taken != 0) process.record(since(taken_at, now), taken);
        for (const PacketDesc& d : b)
            if (d.mbuf != nullptr) packet_tsc(d.mbuf, offset) = now;
    }
    // TSCs of different CPUs may disagree by a few ticks: never a negative duration.
    static uint64_t since(uint64_t then, uint64_t now) { return now > then ? now - then : 0; }
};

}  // namespace tp
