// Stage: one step of packet work, the unit users compose apps from.
//
// There are three kinds. A source fills bursts (`produce`), a processor filters or edits a
// burst in place (`process`), a sink consumes a burst (`process`, leaving it empty). The
// runtime calls these once per burst, never per packet, from exactly one tile at a time, so a
// stage needs no locks for its own state. A stage that drops a packet calls `drop()`, which
// frees the mbuf and counts the reason: every packet a source emits leaves through a sink or a
// counted drop.
//
// Life cycle: constructed from validated parameters (after EAL is up), `open()` before timing
// starts (load files, build tables), bursts, then `close()` once at end of stream (flush,
// export). Errors in open() are LocatedError pointing at the parameter that caused them.
// An exception from produce(), process() or close() fails the stage's node: the runtime counts
// the burst the stage was given (as it stands) as dropped, stops the run and reports the error.
// So a stage throws only while its burst holds exactly the packets it still owns: before it
// drops any, or after it compacted the burst over the ones it dropped.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "descriptors/burst.hpp"
#include "framework/metrics/relaxed_counter.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/pending_outputs.hpp"

namespace tp {

class MbufPool;

enum class StageKind { Source, Processor, Sink };
const char* stage_kind_name(StageKind k);

enum class SourceStatus {
    Produced,  // the burst holds packets
    Idle,      // nothing now (rate limit, waiting for a port), more later
    Done,      // end of stream: nothing more, ever
};

// What a stage may use when it opens.
struct StageEnv {
    MbufPool* pool = nullptr;     // the app's packet pool (sources allocate from it)
    std::string node_name;        // the node this stage instance is
    uint8_t port = 0;             // port id stamped on descriptors a source emits
    int socket = -1;              // NUMA node of the tile that runs the stage
    // Files the stage writes are created under the names these reserve (output_name()) until
    // the whole app has started; nullptr outside an app: the file's own name.
    PendingOutputs* outputs = nullptr;
};

// Per-stage counters, on their own cache lines: written only by the tile running the stage.
struct alignas(64) StageStats {
    static constexpr size_t kMaxReasons = 16;
    RelaxedCounter in;        // packets handed to process()
    RelaxedCounter out;       // packets passed on (processor) or delivered (sink) or emitted (source)
    RelaxedCounter bytes_out; // frame bytes of `out`
    RelaxedCounter drops;     // sum of drop reasons
    RelaxedCounter cycles;    // TSC cycles spent inside produce()/process()
    RelaxedCounter bursts;    // calls that moved at least one packet
    // TSC of the first and the last burst that moved packets (sources: start of the first
    // produce() that emitted, end of the last; others: end of each process()); 0 = none yet.
    // The report's timed window runs from the sources' first to the sinks' last. With the six
    // above they fill the first cache line: a burst writes no other line of the stage's.
    RelaxedCounter first_tsc;
    RelaxedCounter last_tsc;
    RelaxedCounter lost_before;  // sources: packets their device received but lost (no mbuf, missed, errors)
    std::array<RelaxedCounter, kMaxReasons> reason;  // per drop reason
    std::array<RelaxedCounter, kMaxReasons> event;   // per event (counted, not dropped)
};
static_assert(offsetof(StageStats, last_tsc) + sizeof(RelaxedCounter) <= 64,
              "the counters every burst writes share one cache line");

// The mbufs a sink's drop() freed during one process() call, noted while the runtime measures
// latency there: a dropped packet is never a latency sample.
struct DroppedPackets {
    uint16_t n = 0;
    const void* mbuf[kBurstMax];
};

class Stage {
public:
    virtual ~Stage();
    Stage(const Stage&) = delete;
    Stage& operator=(const Stage&) = delete;

    StageKind kind() const { return kind_; }

    virtual void open(StageEnv& env);
    // Sources: fill `b` (b.n == 0 on entry).
    virtual SourceStatus produce(Burst& b);
    // Processors and sinks: handle `b` in place.
    virtual void process(Burst& b);
    // End of stream; everything upstream has been processed.
    virtual void close();

    StageStats& stats() { return stats_; }
    const StageStats& stats() const { return stats_; }
    const std::vector<std::string>& drop_reasons() const { return drop_names_; }
    const std::vector<std::string>& events() const { return event_names_; }
    // The runtime sets this around a sink's process() (nullptr: nothing noted).
    void note_drops_into(DroppedPackets* into) { dropped_note_ = into; }
    // Frame bytes of every packet drop() freed so far: the runtime takes a sink's drops out of
    // the bytes it delivered. Written and read by the stage's own tile only.
    uint64_t dropped_bytes() const { return dropped_bytes_; }

protected:
    explicit Stage(StageKind kind) : kind_(kind) {}

    // Declared in the constructor, in order; the returned index is used on the hot path.
    uint16_t declare_drop(std::string reason);
    uint16_t declare_event(std::string name);

    // Frees the packet and counts it under `reason`.
    void drop(const PacketDesc& d, uint16_t reason);
    void count_event(uint16_t event, uint64_t n = 1) { stats_.event[event].add(n); }

private:
    StageKind kind_;
    StageStats stats_;
    std::vector<std::string> drop_names_;
    std::vector<std::string> event_names_;
    DroppedPackets* dropped_note_ = nullptr;
    uint64_t dropped_bytes_ = 0;
};

}  // namespace tp
