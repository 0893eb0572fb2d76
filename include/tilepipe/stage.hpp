/// @file
/// Stage: one step of packet work, the unit users compose apps from.
///
/// There are three kinds. A source fills bursts (`produce`), a processor filters or edits a
/// burst in place (`process`), a sink consumes a burst (`process`, leaving it empty). The
/// runtime calls these once per burst, never per packet, from exactly one tile at a time, so
/// a stage needs no locks for its own state. A stage that drops a packet calls `drop()`, which
/// frees the mbuf and counts the reason: every packet a source emits leaves through a sink or
/// a counted drop.
///
/// Life cycle: constructed from validated parameters (after EAL is up), `open()` before timing
/// starts (load files, build tables), bursts, then `close()` once at end of stream (flush,
/// export). Errors in open() are LocatedError pointing at the parameter that caused them.
/// An exception from produce(), process() or close() fails the stage's node: the runtime
/// counts the burst the stage was given (as it stands) as dropped, stops the run and reports
/// the error. So a stage throws only while its burst holds exactly the packets it still owns:
/// before it drops any, or after it compacted the burst over the ones it dropped.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tilepipe/counter.hpp"
#include "tilepipe/packet.hpp"
#include "tilepipe/params.hpp"

struct rte_mempool;

namespace tp {

class Doorbell;
class MbufPool;
class PendingOutputs;

/// What a stage does with bursts.
enum class StageKind {
    Source,     ///< fills bursts (produce)
    Processor,  ///< filters or edits bursts in place (process)
    Sink,       ///< consumes bursts (process, leaving them empty)
};
/// "source", "processor" or "sink".
const char* stage_kind_name(StageKind k);

/// What a source's produce() did.
enum class SourceStatus {
    Produced,  ///< the burst holds packets
    Idle,      ///< nothing now (rate limit, waiting for a port), more later
    Done,      ///< end of stream: nothing more, ever
};

/// What a stage may use when it opens.
struct StageEnv {
    MbufPool* pool = nullptr;     ///< the app's packet pool (sources allocate from it: packet_pool())
    std::string node_name;        ///< the node this stage instance is
    uint8_t port = 0;             ///< port id stamped on descriptors a source emits
    int socket = -1;              ///< NUMA node of the tile that runs the stage
    /// Files the stage writes are created under the names these reserve (output_name()) until
    /// the whole app has started; nullptr outside an app: the file's own name.
    PendingOutputs* outputs = nullptr;
    /// The doorbell the thread running the stage sleeps on when its tile is idle (nullptr
    /// outside an app). A source whose packets come from a thread of its own (a file reader)
    /// rings it (Doorbell::ring) after making packets ready, so the tile does not sleep out
    /// its park timeout while they wait.
    Doorbell* bell = nullptr;
};

/// The DPDK mempool behind `env.pool` (rte_pktmbuf_alloc_bulk from it), nullptr when none.
rte_mempool* packet_pool(const StageEnv& env);

/// The name a stage creates for output file `path`: a temporary name reserved in `outputs`
/// when the stage runs in an app (renamed to `path` once the whole app started), `path` itself
/// when `outputs` is nullptr. So a run that fails to start never replaces an earlier output.
std::string output_name(PendingOutputs* outputs, const std::string& path);

/// Per-stage counters, on their own cache lines: written only by the tile running the stage.
struct alignas(64) StageStats {
    /// The most drop reasons (and events) a stage declares.
    static constexpr size_t kMaxReasons = 16;
    RelaxedCounter in;        ///< packets handed to process()
    RelaxedCounter out;       ///< packets passed on (processor), delivered (sink) or emitted (source)
    RelaxedCounter bytes_out; ///< frame bytes of `out`
    RelaxedCounter drops;     ///< sum of drop reasons
    RelaxedCounter cycles;    ///< TSC cycles spent inside produce()/process()
    RelaxedCounter bursts;    ///< calls that moved at least one packet
    /// TSC of the first burst that moved packets (sources: start of the first produce() that
    /// emitted; others: end of the first process()); 0 = none yet. The report's timed window
    /// runs from the sources' first to the sinks' last. With the six above it fills the first
    /// cache line: a burst writes no other line of the stage's.
    RelaxedCounter first_tsc;
    RelaxedCounter last_tsc;     ///< TSC of the last burst that moved packets; 0 = none yet
    RelaxedCounter lost_before;  ///< sources: packets their device received but lost (no mbuf, missed, errors)
    std::array<RelaxedCounter, kMaxReasons> reason;  ///< per drop reason (declare_drop's index)
    std::array<RelaxedCounter, kMaxReasons> event;   ///< per event, counted, not dropped (declare_event's index)
};
static_assert(offsetof(StageStats, last_tsc) + sizeof(RelaxedCounter) <= 64,
              "the counters every burst writes share one cache line");

struct DroppedPackets;  // the runtime's (a sink's drops noted for latency): not part of the stage ABI
struct StageRuntime;    // the runtime's door to a stage's private bookkeeping

/// Base of every stage. A stage class derives from it, declares `static constexpr StageKind
/// kKind`, a constructor from `const ParamValues&`, overrides produce() (sources) or process()
/// (processors, sinks), and registers with TILEPIPE_STAGE (tilepipe/registration.hpp).
class Stage {
public:
    /// Destroyed after close(), or without it when the app failed to start.
    virtual ~Stage();
    /// A stage instance owns its counters and state: never copied.
    Stage(const Stage&) = delete;
    /// Never assigned.
    Stage& operator=(const Stage&) = delete;

    /// Source, processor or sink.
    StageKind kind() const { return kind_; }

    /// Before timing starts: load files, build tables. Throws LocatedError on bad input.
    virtual void open(StageEnv& env);
    /// Sources: fill `b` (b.n == 0 on entry); Done at end of stream.
    virtual SourceStatus produce(Burst& b);
    /// Processors and sinks: handle `b` in place (keep what goes on at the front, set b.n).
    virtual void process(Burst& b);
    /// End of stream; everything upstream has been processed.
    virtual void close();

    /// The stage's counters.
    StageStats& stats() { return stats_; }
    /// The stage's counters.
    const StageStats& stats() const { return stats_; }
    /// The drop reasons declared, by index.
    const std::vector<std::string>& drop_reasons() const { return drop_names_; }
    /// The events declared, by index.
    const std::vector<std::string>& events() const { return event_names_; }

protected:
    /// A stage of kind `kind` (pass the class's kKind).
    explicit Stage(StageKind kind) : kind_(kind) {}

    /// Declares a drop reason (in the constructor, at most kMaxReasons); the returned index is
    /// what drop() takes on the hot path.
    uint16_t declare_drop(std::string reason);
    /// Declares an event (counted, not dropped); the returned index is count_event()'s.
    uint16_t declare_event(std::string name);

    /// Frees the packet and counts it under `reason`.
    void drop(const PacketDesc& d, uint16_t reason);
    /// Counts a drop under `reason` of a packet that never had an mbuf (a copy the pool could
    /// not give): nothing to free.
    void count_drop_without_packet(uint16_t reason) {
        stats_.reason[reason].inc();
        stats_.drops.inc();
    }
    /// Counts `n` occurrences of `event`.
    void count_event(uint16_t event, uint64_t n = 1) { stats_.event[event].add(n); }
    /// A stage with several outputs (StageInfo::outputs): the packet it keeps at `slot` of the
    /// burst goes to output `output` (an index into its outputs). Set for every packet kept,
    /// in the same process() call; the runtime moves a burst that all takes one output whole
    /// and splits the others in one pass.
    void set_output(uint16_t slot, uint8_t output) { output_[slot] = output; }

private:
    friend struct StageRuntime;
    StageKind kind_;
    StageStats stats_;
    std::vector<std::string> drop_names_;
    std::vector<std::string> event_names_;
    DroppedPackets* dropped_note_ = nullptr;  // set by the runtime around a sink's process()
    uint64_t dropped_bytes_ = 0;              // frame bytes drop() freed (the stage's tile only)
    uint8_t output_[kBurstMax] = {};          // set_output(): each kept packet's output
};

}  // namespace tp
