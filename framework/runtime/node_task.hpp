// NodeTask: one graph node as the runtime polls it — input channels, a chain of stages run to
// completion on each burst, and output channels chosen by a dispatch policy.
//
// poll() never blocks: it first offers downstream what the outputs refused last time (nothing
// new is taken while that is pending: back-pressure; an unordered round_robin or flow_hash
// dispatcher only waits while no output, resp. not every output, has room for a burst, so
// one full worker does not hold up the others), then takes one burst — from the
// source stage, or from the inputs in turn (fair: the scan starts after the input served
// last) — runs every stage of the chain on it once, and hands it to the outputs.
// End of stream: a source returning Done, or every input closed and drained, closes the
// stages and then every output, so the end travels after the last packet.
// Ordered farms: the emitter numbers packets (mbuf dynfield), the last worker node reports the
// numbers its stages dropped as hole markers (mbuf == nullptr, number in flow_hash), and the
// collector releases packets in number order through a ReorderWindow. Fed on demand, the
// emitter takes nothing new while it is a window ahead of the collector (SequenceCredit).
// Flow-hash dispatch splits each burst W ways; so that an output does not get bursts of
// 32/W, a node that dispatches by flow hash gathers up to kGatherBursts input bursts into its
// per-output staging before sending (still within one poll: nothing waits for a later one).
// Branch (a stage with several outputs ends the chain): the stage wrote each kept packet's
// output (Stage::set_output); a burst that all takes one output is staged whole, any other is
// split into per-output bursts in one pass. Each output's packets and bytes are counted here.
// A tee's node stages the burst for its first output and a copy for each other (Replicator).
// Counters are the stages' own (single writer: the tile running this task).
// Latency (spec.latency on): a source's node stamps each packet it emits with the TSC read
// right after produce(); a node whose chain ends in a sink records end-to-end latency there;
// with `latency: all` every node also records its queue wait and processing time
// (latency_probe.hpp). All of it per task, read after the threads joined.
// Failure (a stage threw): poll_failed() frees and counts the burst in hand, what the staging
// and the reorder window hold, closes the stages not yet closed and the outputs, then frees
// and counts what still arrives until every input is closed. An ordered collector whose
// inputs ended with numbers still missing (a failed worker's) releases the rest in order.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "descriptors/burst.hpp"
#include "framework/channel/channel.hpp"
#include "framework/model/dispatch.hpp"
#include "framework/metrics/latency_config.hpp"
#include "framework/runtime/chaos_stall.hpp"
#include "framework/runtime/latency_probe.hpp"
#include "framework/runtime/reorder_window.hpp"
#include "framework/runtime/sequence_credit.hpp"
#include "framework/runtime/task.hpp"
#include "framework/runtime/packet_trace.hpp"
#include "framework/stage/replicator.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

struct NodeTaskSpec {
    std::vector<Stage*> chain;  // may be empty (emitter, collector)
    std::vector<Channel<PacketDesc>*> inputs;
    std::vector<Channel<PacketDesc>*> outputs;
    Dispatch dispatch = Dispatch::Single;
    // runtime.prefetch: burst. The node's stages read the packets of every burst it takes from a
    // channel: their header lines and the line at `prefetch_data_at` from each mbuf (where a
    // packet of the node's pool starts with the default headroom) are fetched at once.
    bool prefetch_burst = false;
    uint32_t prefetch_data_at = 0;
    bool stamp_sequence = false;
    bool report_drops = false;
    uint32_t reorder_window = 0;  // > 0: restore sequence order (ordered collector)
    // An ordered farm fed on demand (SequenceCredit, owned by the runner): as its dispatcher
    // (stamp_sequence) this node numbers within `numbering`; as its collector (reorder_window)
    // it gives `releasing` back. One node may be both, for two farms.
    SequenceCredit* numbering = nullptr;
    SequenceCredit* releasing = nullptr;
    LatencyConfig latency{LatencyConfig::Mode::Off, 0};
    std::optional<ChaosStall> stall;  // the app's `chaos:` stall, when it names this node
    // The node's stages use a packet pool other than the app's first: between nodes a simple
    // descriptor (a length, no header read to free it) means "of the first pool", so what the
    // node takes and what it sends on carries kLengthSaturated.
    bool own_pool = false;
    NodeTrace* trace = nullptr;  // `--trace N`: notes the traced packets' steps (nullptr: off)
    // Dispatch::Branch: for each output of the chain's last stage, its index in `outputs`.
    std::vector<uint16_t> branch_outputs;
    // Dispatch::Branch whose stage is a tee: the packets go to its first output, copies from
    // it to each other.
    Replicator* replicator = nullptr;
};

// Packets and frame bytes one output channel of a node was handed (its single writer: the
// node's tile); read live or after the join.
struct alignas(64) EdgeCount {
    RelaxedCounter packets;
    RelaxedCounter bytes;
};

class NodeTask final : public Task {
public:
    static constexpr uint16_t kGatherBursts = 4;

    explicit NodeTask(NodeTaskSpec spec);

    // True when it moved at least one packet or reached end of stream.
    bool poll() override;
    bool done() const override { return done_; }
    bool poll_failed() override;

    // Latency at this node's sink (nullptr: no sink, or latency off).
    const SinkLatency* sink_latency() const { return sink_latency_.get(); }
    // Queue wait and processing time (nullptr unless `latency: all`).
    const NodeResidence* residence() const { return residence_.get(); }
    // What each output channel was handed (by `outputs` index); Branch nodes only, else empty.
    const std::vector<EdgeCount>& edge_counts() const { return edges_; }
    // TSC cycles a chaos stall held this node still (0: none); read after the join.
    uint64_t stalled_cycles() const { return s_.stall ? s_.stall->stalled_cycles() : 0; }

private:
    bool take(Burst& b);          // a burst from the source or the inputs; false if none
    bool inputs_exhausted();
    void prefetch_burst(const Burst& b) const;  // runtime.prefetch: burst
    void run_chain(Burst& b, size_t from);
    void run_chain_reporting_drops(Burst& b, size_t from);
    void stage_for_outputs(const Burst& b);  // dispatch policy: into out_ / any_, no send
    void stage_branches(const Burst& b);     // Branch: whole, or split in one pass
    void stage_copies(const Burst& b);       // Branch of a tee: the burst, then its copies
    void count_edge(size_t o);               // what output o's staging holds now
    bool room_for_a_burst() const;           // every output's staging can take a whole burst
    bool blocked() const;                    // back-pressure: nothing new may be taken now
    bool out_of_credit();                    // a numbering dispatcher too far ahead (SequenceCredit)
    void set_held(bool held);                // what out_of_credit() tells the collector
    void give_credit();                      // a collector released numbers: tell its dispatcher
    size_t next_round_robin() const;         // round robin passing over a full worker
    void process(Burst& b, size_t from);     // chain, sequence stamps, then staging
    void took(const Burst& b);               // residence: the queue wait of what take() got
    bool flush();                 // offers pending bursts; true if anything moved
    bool pending() const;
    void finish();
    void close_stages();           // those not closed yet, in chain order
    void give_back_held();         // failure: every packet this task holds

    NodeTaskSpec s_;
    bool is_source_ = false;
    bool ends_in_sink_ = false;
    size_t next_input_ = 0;
    // The inputs a receive polls: one per receive side (Channel::receive_side), so links that
    // share one queue (a collector's asymmetric interface on the messaging network, a shared
    // locked queue) cost one poll, not one per sender: the receive cost stays flat in the
    // number of senders. End of stream is still read from every input.
    std::vector<Channel<PacketDesc>*> polled_;
    size_t next_output_ = 0;      // round_robin / on_demand position
    bool source_done_ = false;    // the source said Done: nothing more to produce
    bool pass_over_ = false;      // unordered round_robin / flow_hash: a full worker does not stall the rest
    struct Staged {  // per output: descriptors it has not accepted yet
        uint16_t n = 0;
        alignas(64) PacketDesc d[kGatherBursts * kBurstMax];
    };
    std::vector<Staged> out_;
    std::vector<uint16_t> out_at_;
    Burst any_;                   // on_demand: descriptors no output had room for
    uint16_t any_at_ = 0;
    uint32_t next_sequence_ = 0;
    uint32_t numbering_seen_ = 0;   // spec.numbering->released at the last look
    bool numbering_held_ = false;   // spec.numbering->held as last stored
    uint32_t releasing_at_ = 0;     // spec.releasing->released as last stored
    int seq_offset_ = -1;
    std::unique_ptr<ReorderWindow> window_;
    Burst hand_;                  // the burst the chain is working on
    Burst kept_;                  // report_drops: the packets of hand_ the chain is working on
    size_t closed_ = 0;           // stages closed so far
    std::optional<EntryStamp> entry_stamp_;  // a source's node: stamps the samples' entry TSC
    std::unique_ptr<SinkLatency> sink_latency_;
    std::unique_ptr<NodeResidence> residence_;
    uint64_t taken_at_ = 0;       // residence: TSC when the burst in hand was taken
    uint16_t taken_ = 0;          // residence: packets taken into it
    bool abandoned_ = false;      // failure: held packets given back, outputs closed
    uint64_t taken_total_ = 0;    // packets taken (a source's: emitted), for a chaos stall
    std::vector<EdgeCount> edges_;  // Branch: per output channel
    bool done_ = false;
};

}  // namespace tp
