#include "stages/tee.hpp"

#include <rte_mbuf.h>

#include <stdexcept>

#include "framework/stage/registry.hpp"

namespace tp {

void Tee::check_params(const ParamValues& params) {
    if (params.get_uint("outputs") == 0)
        params.fail("outputs", "a tee of 0 outputs copies to nowhere: give it 1 or more (out0, out1, ...)");
}

std::vector<OutputSpec> Tee::outputs(const ParamValues& params) {
    std::vector<OutputSpec> outs;
    const uint64_t n = params.get_uint("outputs");
    for (uint64_t o = 0; o < n; ++o)
        outs.push_back(OutputSpec{"out" + std::to_string(o), o == 0 ? "every packet itself" : "a copy of every packet"});
    return outs;
}

Tee::Tee(const ParamValues& params) : Stage(kKind) {
    check_params(params);
    no_mbuf_ = declare_drop("no_mbuf");
    copies_ = declare_event("copies");
}

void Tee::open(StageEnv& env) {
    pool_ = packet_pool(env);
    if (pool_ == nullptr) throw std::logic_error("tee opened without a packet pool");
}

void Tee::process(Burst& b) {
    for (uint16_t i = 0; i < b.n; ++i) set_output(i, 0);
}

uint16_t Tee::replicate(const Burst& b, PacketDesc* copies) {
    uint16_t n = 0;
    for (const PacketDesc& d : b) {
        rte_mbuf* c = rte_pktmbuf_copy(d.mbuf, pool_, 0, UINT32_MAX);
        if (c == nullptr) [[unlikely]] {
            count_drop_without_packet(no_mbuf_);
            continue;
        }
        PacketDesc to = d;
        to.mbuf = c;
        // A copy of several segments is no simple mbuf.
        if (c->nb_segs != 1) to.length = PacketDesc::kLengthSaturated;
        copies[n++] = to;
    }
    count_event(copies_, b.n);  // each copy asked for: made, or counted as a drop
    return n;
}

std::string Tee::stage_notes() {
    return "  outputs: out0 (every packet itself), out1 .. outN-1 (a copy of every packet each, from the pool:\n"
           "  copies, not shared mbufs, since stages edit packets in place); a copy the pool cannot give is\n"
           "  dropped as no_mbuf; the report's copies count as packets emitted\n";
}

TILEPIPE_STAGE(Tee, "tee",
               "processor: every packet leaves by each of its outputs (out0 the packet, the others "
               "copies from the pool)",
               param<uint64_t>("outputs", 2, "how many outputs, out0 .. outN-1 (at least 1)").between(0, 64));

}  // namespace tp
