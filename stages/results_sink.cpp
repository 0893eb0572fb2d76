#include "stages/results_sink.hpp"

#include <chrono>
#include <thread>

#include "framework/accel/packet_link.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {
constexpr uint32_t kMaxResults = 1u << 20;
}

void ResultsSink::check_params(const ParamValues& p) {
    if (bound_link() == nullptr)
        throw LocatedError(p.node_location(),
                           "the results sink is read by a C++ program: see tp::PacketAccelerator "
                           "(an app with it cannot run on its own)");
    const uint64_t c = p.get_uint("capacity");
    if ((c & (c - 1)) != 0) p.fail("capacity", "capacity must be a power of two, got " + std::to_string(c));
}

ResultsSink::ResultsSink(const ParamValues& p)
    : Stage(kKind), capacity_(static_cast<uint32_t>(p.get_uint("capacity"))) {}

void ResultsSink::open(StageEnv& env) {
    PacketLink* link = bound_link();
    if (link == nullptr)
        throw LocatedError(Location{env.node_name}, "the results sink is read by a C++ program: see tp::PacketAccelerator");
    if (link->to_caller)
        throw LocatedError(Location{env.node_name}, "an accelerator's app has one results sink (this is a second one)");
    link->to_caller = make_desc_channel({"ring", capacity_, -1});
    link_ = link;
}

void ResultsSink::process(Burst& b) {
    Channel<PacketDesc>& out = *link_->to_caller;
    uint32_t sent = 0;
    unsigned misses = 0;
    while (sent < b.n) {
        const uint32_t k = out.try_send_burst(b.d + sent, b.n - sent);
        sent += k;
        if (k != 0) {
            misses = 0;
        } else if (++misses < 64) {
            std::this_thread::yield();  // the program reads soon: it owes the app room
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(50));  // it is busy elsewhere
        }
    }
    b.n = 0;  // every packet handed over is delivered (the runtime counts it from n)
}

void ResultsSink::close() { link_->to_caller->close(); }

TILEPIPE_STAGE(ResultsSink, "results",
               "sink: hand every packet to a C++ program (tp::PacketAccelerator only), counting it as delivered",
               param<uint32_t>("capacity", 1024,
                               "results the sink may hand over before the program reads them (a power of two)")
                   .between(1, kMaxResults));

}  // namespace tp
