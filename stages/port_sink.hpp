// PortSink (`port_out`): transmits every packet it receives on one TX queue of a DPDK ethdev
// port: a real NIC or any virtual PMD (net_null, net_ring, net_pcap tx_pcap, net_tap, ...).
//
// Synopsis
//   sink: { stage: port_out, device: "0000:01:00.1", tx_queue: 0 }
//   sink: { stage: port_out, device: "net_pcap1,tx_pcap=out/sent.pcap" }
//
// Parameters
//   device  PCI address, name of an existing port, or a virtual device    default net_null0
//           spec (created at open when no port of that name exists)
//   tx_queue  TX queue this instance transmits on                        default 0
//   queues  RX and TX queues configured on the port (when first to open) default 1
//   txd     descriptors per TX queue                                     default 1024
//
// The default device, net_null0, frees what it is given: apps run as shipped and measure the
// pipeline without a NIC. The port is shared with any `port` source or other `port_out` on the
// same device (see EthdevPort); the first to open configures and starts it.
//
// A NIC is named by its PCI address: EAL then scans the PCI bus for that device only (without
// one, it starts with --no-pci).
//
// process() hands the burst to rte_eth_tx_burst; while the queue is full it retries a bounded
// number of times (kTxAttempts calls in all), then drops what is left. It never spins for ever.
//
// Drops: `tx_full` — the TX queue stayed full through every attempt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class PortSink final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    // The PCI address `device` names, if any: EAL then probes that device only.
    static std::vector<std::string> pci_devices(const ParamValues& p);

    // rte_eth_tx_burst calls per burst before the rest is dropped as `tx_full`.
    static constexpr unsigned kTxAttempts = 64;

    explicit PortSink(const ParamValues& params);
    ~PortSink() override;

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    // The ethdev port id (valid between open() and close()).
    uint16_t port_id() const { return port_id_; }

private:
    ParamValues params_;
    uint16_t queue_;
    uint16_t queues_;
    uint16_t txd_;
    uint16_t tx_full_;
    uint16_t port_id_ = 0;
    bool opened_ = false;
};

}  // namespace tp
