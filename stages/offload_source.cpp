#include "stages/offload_source.hpp"

#include <rte_mbuf.h>

#include "descriptors/wire_length.hpp"
#include "framework/accel/packet_link.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {
constexpr uint32_t kMaxOffloadCapacity = 1u << 20;
}

void OffloadSource::check_params(const ParamValues& p) {
    if (bound_link() == nullptr)
        throw LocatedError(p.node_location(),
                           "the offload source is fed by a C++ program: see tp::PacketAccelerator "
                           "(an app with it cannot run on its own)");
    const uint64_t c = p.get_uint("capacity");
    if ((c & (c - 1)) != 0) p.fail("capacity", "capacity must be a power of two, got " + std::to_string(c));
}

OffloadSource::OffloadSource(const ParamValues& p)
    : Stage(kKind), capacity_(static_cast<uint32_t>(p.get_uint("capacity"))) {}

void OffloadSource::open(StageEnv& env) {
    PacketLink* link = bound_link();
    if (link == nullptr)
        throw LocatedError(Location{env.node_name}, "the offload source is fed by a C++ program: see tp::PacketAccelerator");
    if (link->to_app)
        throw LocatedError(Location{env.node_name}, "an accelerator's app has one offload source (this is a second one)");
    link->to_app = make_desc_channel({"ring", capacity_, -1});
    link->pool = packet_pool(env);
    link_ = link;
    wire_offset_ = wire_length_offset();
}

SourceStatus OffloadSource::produce(Burst& b) {
    Channel<PacketDesc>& in = *link_->to_app;
    // closed() first (acquire): closed and then empty means every offloaded packet was taken.
    const bool closed = in.closed();
    const uint32_t n = in.try_recv_burst(b.d, kBurstMax);
    if (n == 0) return closed ? SourceStatus::Done : SourceStatus::Idle;
    for (uint32_t i = 0; i < n; ++i) wire_length(b.d[i].mbuf, wire_offset_) = b.d[i].mbuf->pkt_len;
    b.n = static_cast<uint16_t>(n);
    return SourceStatus::Produced;
}

TILEPIPE_STAGE(OffloadSource, "offload",
               "source: the packets a C++ program offloads (tp::PacketAccelerator only)",
               param<uint32_t>("capacity", 1024,
                               "packets the program may offload ahead of the source (a power of two)")
                   .between(1, kMaxOffloadCapacity));

}  // namespace tp
