// offload: the source of an app run as a packet accelerator (tp::PacketAccelerator). It emits
// the packets the C++ program offloads, in offload order, taking them from a bounded
// single-producer channel the program fills; its stream ends when the program calls
// end_of_stream() and everything offloaded before has been emitted.
//
// Outside an accelerator (`tilepipe run`, `tilepipe validate`) nothing could feed it: it is
// refused at validation rather than left waiting forever.
#pragma once

#include "framework/stage/stage.hpp"

namespace tp {

struct PacketLink;

class OffloadSource final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Source;
    explicit OffloadSource(const ParamValues& p);
    // Refused unless an accelerator is building the app; capacity a power of two.
    static void check_params(const ParamValues& p);
    void open(StageEnv& env) override;
    SourceStatus produce(Burst& b) override;

private:
    uint32_t capacity_;
    PacketLink* link_ = nullptr;
    int wire_offset_ = -1;  // descriptors/wire_length.hpp: the frame's length
};

}  // namespace tp
