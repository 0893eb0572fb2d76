#include "stages/port_sink.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <stdexcept>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/ethdev_port.hpp"

namespace tp {

namespace {

uint16_t checked_u16(const ParamValues& p, const char* name, uint64_t lowest) {
    const uint64_t v = p.get_uint(name);
    if (v < lowest || v > UINT16_MAX)
        p.fail(name, std::string("'") + name + "' must be between " + std::to_string(lowest) +
                         " and 65535, got " + std::to_string(v));
    return static_cast<uint16_t>(v);
}

}  // namespace

PortSink::PortSink(const ParamValues& params)
    : Stage(kKind),
      params_(params),
      queue_(checked_u16(params, "tx_queue", 0)),
      queues_(checked_u16(params, "queues", 1)),
      txd_(checked_u16(params, "txd", 1)) {
    if (queue_ >= queues_)
        params.fail("tx_queue", "'tx_queue' " + std::to_string(queue_) + " does not exist: the port gets " +
                                 std::to_string(queues_) + " queue(s) ('queues')");
    tx_full_ = declare_drop("tx_full");
}

PortSink::~PortSink() { close(); }

void PortSink::open(StageEnv& env) {
    if (env.pool == nullptr) throw std::logic_error("port sink opened without a packet pool");
    PortRequest r;
    r.device = params_.get_string("device");
    r.queue = queue_;
    r.queues = queues_;
    r.txd = txd_;
    r.pool = env.pool->get();  // RX queues of a port the sink configures first
    r.socket = env.socket;
    try {
        port_id_ = ethdev_port_acquire(r);
    } catch (const std::runtime_error& e) {
        params_.fail("device", r.device + ": " + e.what());
    }
    opened_ = true;
}

void PortSink::process(Burst& b) {
    if (!opened_) {
        for (const PacketDesc& d : b) drop(d, tx_full_);
        b.n = 0;
        return;
    }
    rte_mbuf* m[kBurstMax];
    for (uint16_t i = 0; i < b.n; ++i) m[i] = b.d[i].mbuf;
    // The PMD frees what it sends inside DPDK, unseen by ThreadSanitizer (no code without TSan).
    release_to_pool(m, b.n);
    uint16_t sent = 0;
    for (unsigned attempt = 0; attempt < kTxAttempts && sent < b.n; ++attempt) {
        const uint16_t n = rte_eth_tx_burst(port_id_, queue_, m + sent, b.n - sent);
        sent += n;
        if (n == 0) rte_pause();
    }
    for (uint16_t i = sent; i < b.n; ++i) drop(b.d[i], tx_full_);
    b.n = 0;
}

void PortSink::close() {
    if (!opened_) return;
    opened_ = false;
    ethdev_port_release(port_id_);
}

std::vector<std::string> PortSink::pci_devices(const ParamValues& p) { return pci_devices_in(p.get_string("device")); }

TILEPIPE_STAGE(PortSink, "port_out", "sink: transmit on one TX queue of a DPDK ethdev port (NIC or virtual PMD)",
               param<std::string>("device", "net_null0",
                                  "PCI address, existing port name, or vdev spec created at open "
                                  "(net_null0 frees packets; net_pcap0,tx_pcap=FILE writes them)"),
               param<uint64_t>("tx_queue", 0, "TX queue this instance transmits on"),
               param<uint64_t>("queues", 1, "RX/TX queues configured on the port by its first user"),
               param<uint64_t>("txd", 1024, "descriptors per TX queue"));

}  // namespace tp
