// PacketTrace: the path of the first N packets the sources emit (`tilepipe run --trace N`),
// as VPP's `trace add`: each node's tile notes, per stage, whether a traced packet passed,
// was delivered by a sink or dropped (with the stage's drop reason), and the report prints
// each packet's path node by node.
//
// A traced packet carries its number in an mbuf field (0: not traced), set by its source and
// cleared before every stage's process() (a stage may free it: a freed mbuf must not carry a
// number into its next use), then set again on those still in the burst. Every mbuf of the
// app's pools starts at 0 (clear_pool). With no trace, nothing here runs; with one, each
// stage's burst costs one check of live() once every traced packet has ended.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "descriptors/burst.hpp"
#include "framework/stage/stage.hpp"

struct rte_mempool;

namespace tp {

enum class TraceStep : uint8_t { Emitted, Passed, Delivered, Dropped, Held };
// "emitted", "passed", "delivered", "dropped", "held".
const char* trace_step_name(TraceStep s);

struct TraceEvent {
    uint64_t tsc = 0;     // when the stage's process() returned (the source's produce())
    uint32_t packet = 0;  // the trace's number, from 0
    uint16_t stage = 0;   // index into the node's chain
    uint16_t reason = 0;  // the stage's drop reason (Dropped)
    TraceStep step = TraceStep::Passed;
};

// Shared by every node of a run.
class PacketTrace {
public:
    explicit PacketTrace(uint32_t packets);
    uint32_t packets() const { return packets_; }
    // Some traced packet is still to emit or on its way: the nodes look at their bursts.
    bool live() const {
        return next_.load(std::memory_order_relaxed) < packets_ || in_flight_.load(std::memory_order_relaxed) > 0;
    }
    // Sets the field of every mbuf of `pool` to 0 (before the run: every mbuf is in it).
    void clear_pool(rte_mempool* pool) const;

private:
    friend class NodeTrace;
    uint32_t packets_;
    int offset_;
    // Relaxed: each number is claimed once (fetch_add); live() may see a count late, which only
    // costs a look at a burst or two.
    std::atomic<uint32_t> next_{0};
    std::atomic<uint32_t> in_flight_{0};
};

// One node's notes: written by its tile only, read after the threads joined.
class NodeTrace {
public:
    explicit NodeTrace(PacketTrace& trace) : trace_(trace) {}
    bool live() const { return trace_.live(); }
    // A source's burst: numbers its packets while numbers are left.
    void emitted(const Burst& b, uint64_t tsc);
    // Around stage `stage`'s process(): before() takes the numbers out of the burst's traced
    // mbufs and empties dropped(), where Stage::drop notes what it frees; after() notes where
    // each went and numbers again those still in the burst.
    void before(const Burst& b);
    void after(const Burst& b, uint16_t stage, bool sink, uint64_t tsc);
    DroppedPackets& dropped() { return dropped_; }
    const std::vector<TraceEvent>& events() const { return events_; }

private:
    uint32_t& number_of(const void* mbuf) const;
    void note(uint32_t packet, uint16_t stage, TraceStep step, uint16_t reason, uint64_t tsc);
    PacketTrace& trace_;
    std::vector<TraceEvent> events_;
    DroppedPackets dropped_;
    uint16_t n_ = 0;  // traced packets before() took out of the burst
    const void* mbuf_[kBurstMax];
    uint32_t packet_[kBurstMax];
};

}  // namespace tp
