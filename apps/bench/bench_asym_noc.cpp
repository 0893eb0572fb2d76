#include "apps/bench/bench_asym_noc.hpp"

#include <algorithm>

#include "apps/bench/harness.hpp"
#include "framework/noc/asymmetric_credit_channel.hpp"
#include "framework/noc/credit_channel.hpp"
#include "framework/noc/eventdev_network.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::bench {

namespace {

template <typename Net>
NocAsymResult run(const Common& c, uint32_t senders, uint64_t iters, uint32_t capacity) {
    noc::NetworkConfig nc;
    nc.tiles = senders + 1;  // tile 0 receives, tiles 1..N send
    nc.queues = 2;           // queue 0: the interface (data at 0, credits at the senders); 1: the reply
    nc.doorbells = false;    // both sides poll, as in every row
    Net net(nc);

    NocAsymResult r;
    r.credits = std::max<uint32_t>(1, std::min(capacity, nc.queue_words / (2 * senders)));
    noc::AsymmetricCreditConfig ac;
    ac.receiver = 0;
    for (uint32_t s = 1; s <= senders; ++s) ac.senders.push_back(s);
    ac.credits = r.credits;
    noc::AsymmetricCreditChannel<Net> asym(net, ac);

    noc::CreditChannelConfig rc;  // the reply: tile 0 -> tile 1 (sender 0)
    rc.sender = 0;
    rc.receiver = 1;
    rc.data_queue = 1;
    rc.ack_queue = 1;
    rc.data_tag = 3;
    rc.ack_tag = 4;
    rc.credits = std::min(capacity, nc.queue_words / 2);
    noc::CreditChannel<Net> reply(net, rc);

    r.one_way = measure(
        c, iters,
        [&](uint64_t i) {
            while (!asym.sender(0).try_send(&i)) cpu_pause();
            uint64_t v;
            noc::TileId source;
            while (!reply.receiver().try_recv(&v, source)) cpu_pause();
            return v == i;
        },
        [&](uint64_t) {
            uint64_t v;
            uint32_t from;
            while (!asym.try_recv(&v, from)) cpu_pause();
            while (!reply.sender().try_send(&v)) cpu_pause();
        });
    return r;
}

}  // namespace

bool is_noc_transport(const std::string& transport) { return transport == "udn" || transport == "udn_eventdev"; }

NocAsymResult measure_noc_asym(const Common& c, const std::string& transport, uint32_t senders, uint64_t iters,
                               uint32_t capacity) {
    if (transport == "udn_eventdev") return run<noc::EventdevNetwork>(c, senders, iters, capacity);
    return run<noc::MessageNetwork>(c, senders, iters, capacity);
}

}  // namespace tp::bench
