// results: the sink of an app run as a packet accelerator (tp::PacketAccelerator). It hands
// each packet it receives, in arrival order, to the C++ program through a bounded
// single-producer channel; the program then owns the mbuf (it frees it or offloads it again).
// A packet handed over counts as delivered. When the channel is full the sink waits for the
// program to read (back-pressure to the whole app); the accelerator reads on the program's
// behalf while the program waits to offload, so the two never wait on each other.
//
// Outside an accelerator nothing would read it: it is refused at validation.
#pragma once

#include "framework/stage/stage.hpp"

namespace tp {

struct PacketLink;

class ResultsSink final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    explicit ResultsSink(const ParamValues& p);
    // Refused unless an accelerator is building the app; capacity a power of two.
    static void check_params(const ParamValues& p);
    void open(StageEnv& env) override;
    void process(Burst& b) override;
    // End of stream: the program sees the channel closed once it has read everything.
    void close() override;

private:
    uint32_t capacity_;
    PacketLink* link_ = nullptr;
};

}  // namespace tp
