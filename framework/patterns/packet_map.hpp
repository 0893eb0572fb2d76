// PacketMap: the data-parallel map pattern for packet apps. A task is one burst; the emitter
// stores it in a task slot and multicasts the slot's index (a 64-bit word) to the W workers,
// linearly or down the binary tree of TreeMulticast; worker w runs its chain of stages on its
// share of the burst (a contiguous slice) and reports a partial to the collector; the collector
// completes a task when all W partials arrived and emits its surviving packets in the order
// the emitter received them, then hands the slot back to the emitter.
//
// Synchronisation is entirely by the channels: a slot is written by the emitter before its
// index is sent (release) and read by a worker after receiving it (acquire); each worker writes
// only its own output area, read by the collector after the partial arrives; the collector
// returns the slot over a channel before the emitter reuses it. End of stream follows the
// multicast: the emitter closes the workers' inputs, each worker closes its children's and its
// collector channel once its input is drained, the collector finishes when every worker is
// (closing the freed slots' link after the last slot), and the emitter once that link is
// closed and drained: it keeps taking freed slots to the end, since a credit receiver that
// stops taking may keep some of its sender's credits (noc/credit_receiver.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "descriptors/burst.hpp"
#include "framework/channel/channel.hpp"
#include "framework/patterns/tree_multicast.hpp"
#include "framework/runtime/task.hpp"
#include "framework/runtime/packet_trace.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

// The task slots one map owns, shared by its emitter, workers and collector.
class MapTaskSlots {
public:
    MapTaskSlots(uint32_t slots, uint32_t workers);

    struct alignas(64) Share {  // one worker's output for one task: its own cache lines
        PacketDesc d[kBurstMax];
        uint16_t n = 0;
    };
    struct Slot {
        Burst input;      // written by the emitter
        uint64_t seq = 0; // the task's number, in emission order
        std::unique_ptr<Share[]> shares;
    };

    uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }
    uint32_t workers() const { return workers_; }
    Slot& operator[](uint64_t i) { return slots_[i]; }

    // Worker w's slice of an n-packet task: [first, first + count).
    void slice(uint32_t w, uint16_t n, uint16_t& first, uint16_t& count) const;

private:
    uint32_t workers_;
    std::vector<Slot> slots_;
};

class MapEmitterTask final : public Task {
public:
    // `to_workers[w]`: linear mode, one channel per worker; tree mode, only [0] (the root).
    MapEmitterTask(MapTaskSlots& slots, std::vector<Channel<PacketDesc>*> inputs,
                   std::vector<Channel<uint64_t>*> to_workers, Channel<uint64_t>* freed);
    bool poll() override;
    bool done() const override { return done_; }
    // After a failure the tasks already multicast finish their way through the map; what
    // arrives from now on is given back (freed and counted), and the end still goes down.
    bool poll_failed() override { return poll(); }

private:
    bool discard_inputs();
    bool send_pending();
    bool take_freed();
    MapTaskSlots& slots_;
    std::vector<Channel<PacketDesc>*> in_;
    std::vector<Channel<uint64_t>*> out_;
    Channel<uint64_t>* freed_;
    std::vector<uint32_t> free_;   // slots the emitter may fill
    std::vector<uint32_t> unsent_; // outputs the current task has not reached yet
    uint64_t current_ = 0;
    uint64_t seq_ = 0;
    size_t next_in_ = 0;
    bool outputs_ended_ = false;  // the end went down to the workers
    bool done_ = false;   // and the collector closed the freed slots' link, all taken
};

class MapWorkerTask final : public Task {
public:
    // `trace`: notes the traced packets' steps through the chain (nullptr: off).
    MapWorkerTask(MapTaskSlots& slots, uint32_t worker, std::vector<Stage*> chain, Channel<uint64_t>* from_parent,
                  std::vector<Channel<uint64_t>*> to_children, Channel<uint64_t>* to_collector, NodeTrace* trace = nullptr);
    bool poll() override;
    bool done() const override { return done_; }
    // A failed worker keeps the map flowing: it forwards every task and returns an empty share.
    bool poll_failed() override;
    // Cut short: as after a failure, but no task is half done (poll_failed's first step).
    bool poll_cut() override { return poll(); }

private:
    void close_chain();  // at the end of the stream
    MapTaskSlots& slots_;
    uint32_t w_;
    Burst part_;                    // this worker's share while its chain runs
    bool reported_failure_ = false;
    std::vector<Stage*> chain_;
    Channel<uint64_t>* in_;
    std::vector<Channel<uint64_t>*> children_;
    Channel<uint64_t>* collector_;
    std::vector<uint32_t> unsent_;  // children (then the collector: index children_.size()) left
    uint64_t current_ = 0;
    bool done_ = false;
    NodeTrace* trace_;
};

class MapCollectorTask final : public Task {
public:
    MapCollectorTask(MapTaskSlots& slots, std::vector<Channel<uint64_t>*> from_workers,
                     Channel<PacketDesc>* output, Channel<uint64_t>* freed);
    bool poll() override;
    bool done() const override { return done_; }
    // After a failure complete tasks are given back instead of emitted, and their slots still
    // return to the emitter, so the workers and the emitter drain and the end reaches the output.
    bool poll_failed() override { return poll(); }

private:
    bool emit_ready();
    void count_partial(uint64_t slot);
    MapTaskSlots& slots_;
    std::vector<Channel<uint64_t>*> in_;
    Channel<PacketDesc>* out_;
    Channel<uint64_t>* freed_;
    std::vector<uint32_t> partials_;   // per slot: partials received
    std::vector<int64_t> ready_;       // per seq % slots: slot index of a complete task, or -1
    uint64_t next_seq_ = 0;
    Burst pending_;                    // the task being emitted
    uint16_t pending_at_ = 0;
    int64_t pending_slot_ = -1;
    bool freed_pending_ = false;
    size_t next_in_ = 0;
    uint64_t in_flight_ = 0;
    bool done_ = false;
};

}  // namespace tp
