// What a node records when the run measures latency (LatencyConfig), all of it owned by the
// node's tile: nothing here is shared on the hot path. The runner reads it after the threads
// have joined (or live through LatencyHistogram's relaxed counters).
//
// EntryStamp: at a source's node, the packets that will be latency samples: one in `every` the
// source emits, by a countdown carried across bursts (no division per packet), so samples =
// emitted / every, rounded down, less those dropped on the way. Only those mbufs are written
// (their entry TSC); their descriptors are marked (PacketDesc::sampled). With the default
// `sample 64` the source touches one mbuf in 64 instead of every one.
//
// SinkLatency: at a sink, now - entry stamp for each marked packet the sink receives, less the
// marked packets the sink itself dropped (noted through StageRuntime::note_drops_into: a counted drop
// is never a sample). The marks are in the descriptors: a sink that frees simple mbufs without
// reading them (PacketDesc) still reads no other mbuf. Stamps are read before process(), which
// frees the mbufs; the time recorded is taken after it, so the sink's own work is part of the
// latency.
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
        : offset_(entry_tsc_offset()), every_(every), next_(every - 1) {}

    void stamp(Burst& b, uint64_t now) {
        uint32_t i = next_;
        for (; i < b.n; i += every_) {
            b.d[i].sampled = 1;
            packet_tsc(b.d[i].mbuf, offset_) = now;
        }
        next_ = i - b.n;
    }

private:
    int offset_;
    uint32_t every_;
    uint32_t next_;  // index, in the next burst, of the next sample
};

class SinkLatency {
public:
    SinkLatency() : offset_(entry_tsc_offset()) {}

    void pick(const Burst& b) {
        picked_ = 0;
        dropped_.n = 0;
        for (const PacketDesc& d : b) {
            if (!d.sampled || d.mbuf == nullptr) continue;
            mbuf_[picked_] = d.mbuf;
            stamp_[picked_++] = packet_tsc(d.mbuf, offset_);
        }
    }
    DroppedPackets& dropped() { return dropped_; }
    void record(uint64_t now);

    const LatencyHistogram& histogram() const { return hist_; }

private:
    int offset_;
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
