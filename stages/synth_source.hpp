// synth: a source of generated Ethernet/IPv4 UDP or TCP traffic, so an app runs with no
// capture at hand (the built-in default demo).
//
// Frames are built once in open(), one per flow and distinct size (imix: three per flow), with
// valid IPv4 and L4 checksums; produce() copies them into fresh mbufs. Flow i uses
// 10.0.x.y -> 10.128.x.y with ports 1024 + i -> 80 + (i % 16); flows are emitted round-robin;
// `mix` makes odd flows TCP and even ones UDP. `size` is the frame length as a capture holds it
// (no FCS), in decimal, or `imix`: 64, 594 and 1514 bytes in a 7:4:1 pattern.
// Pacing (`pps` or `mbps`, at most one; none = top speed): packet k is due k / pps seconds
// (or its preceding frame bytes x 8 / mbps microseconds) after the first produce(); produce()
// emits what is due, up to a burst, and returns Idle otherwise, never sleeping. A source that
// fell behind catches up in full bursts, so the achieved rate is the paced one whenever the
// app can go that fast.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/metrics/emit_plan.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class SynthSource final : public Stage, public PlansEmission {
public:
    static constexpr StageKind kKind = StageKind::Source;
    explicit SynthSource(const ParamValues& p);
    // Every frame is one mbuf of the app's pool: a size beyond its data room is refused.
    static void check_data_room(const ParamValues& p, uint32_t data_room);
    // Size and flow bounds (size 60-9000 or imix, flows 1-65536, duration >= 0), at most one
    // of pps and mbps; no EAL needed.
    static void check_params(const ParamValues& p);
    void open(StageEnv& env) override;
    SourceStatus produce(Burst& b) override;

    // The prebuilt frames, one per distinct size and flow, and their bytes in all.
    size_t template_frames() const { return frames_.size(); }
    size_t template_bytes() const { return bytes_.size(); }
    // For the progress line: `count`, when no duration may end the stream first.
    EmitPlan emit_plan() const override { return EmitPlan{duration_ == 0 ? count_ : 0, 0, 0}; }

private:
    static std::vector<uint16_t> size_pattern(const ParamValues& p);

    struct Frame {
        uint32_t offset;  // into bytes_
        uint16_t length;
    };
    const Frame& frame_for(uint64_t seq) const;

    std::vector<uint16_t> sizes_;    // distinct frame sizes (one, or imix's 3)
    std::vector<uint16_t> pattern_;  // per emitted packet, an index into sizes_ (imix: 12 long)
    uint32_t flows_ = 0;
    std::string proto_;
    uint64_t count_ = 0;
    double duration_ = 0;
    double pps_ = 0;
    double mbps_ = 0;
    uint64_t end_tsc_ = 0;
    uint64_t emitted_ = 0;
    int wire_offset_ = -1;  // descriptors/wire_length.hpp: the frame's length
    double packets_per_cycle_ = 0;   // pps pacing (0: off)
    double bytes_per_cycle_ = 0;     // mbps pacing (0: off)
    uint64_t pace_start_tsc_ = 0;    // armed on the first produce()
    uint64_t emitted_bytes_ = 0;
    uint64_t due_now(uint64_t max);  // packets due now, at most max
    StageEnv env_;
    std::vector<uint8_t> bytes_;   // every prebuilt frame, back to back
    std::vector<Frame> frames_;    // [size index][flow]
};

}  // namespace tp
