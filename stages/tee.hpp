// Tee (`tee`): every packet leaves by each of its outputs, like Click's Tee and BESS's
// Replicate: a monitor beside a forwarder, a capture of what a router sends.
//
// Synopsis
//   - stage: tee
//     outputs: 2                       # out0, out1
//     next: {out0: route, out1: capture}
//
// Parameters
//   outputs  how many outputs (out0 .. outN-1); 0 is refused       default 2
//
// Copies, not reference counts: out0 takes the packet itself, every other output a copy
// (rte_pktmbuf_copy from the node's pool: headers, parse results, timestamps and the latency
// mark come along). Stages edit packets in place (lpm_route's TTL and checksum, rewrite's MACs)
// and nothing in tilepipe copies on write, so a shared mbuf would let one branch's edits reach
// the other; a copy is also a simple mbuf a sink frees straight to its pool. A copy the pool
// cannot give is dropped as `no_mbuf` (the original still goes on). The report counts the
// copies asked for (`copies`, made or dropped): packets emitted + copies = delivered + dropped.
#pragma once

#include <cstdint>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/replicator.hpp"
#include "framework/stage/stage.hpp"
#include "tilepipe/registration.hpp"

struct rte_mempool;

namespace tp {

class Tee final : public Stage, public Replicator {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 0.5;

    explicit Tee(const ParamValues& params);
    // A tee of no outputs copies to nowhere: refused.
    static void check_params(const ParamValues& params);
    static std::vector<OutputSpec> outputs(const ParamValues& params);
    static std::string stage_notes();

    void open(StageEnv& env) override;
    void process(Burst& b) override;  // every packet to out0: replicate() makes the rest
    uint16_t replicate(const Burst& b, PacketDesc* copies) override;
    uint64_t copies_made() const override { return stats().event[copies_].get(); }  // with no_mbuf drops

private:
    rte_mempool* pool_ = nullptr;
    uint16_t no_mbuf_;  // drop reason
    uint16_t copies_;   // event
};

}  // namespace tp
