// PortSink (`port_out`): transmits every packet it receives on one TX queue of a DPDK ethdev
// port: a real NIC or any virtual PMD (net_null, net_ring, net_pcap tx_pcap, net_tap, ...), or,
// given `devices`, on the port the packet was routed to (PacketDesc::port, set by lpm_route).
//
// Synopsis
//   sink: { stage: port_out, device: "0000:01:00.1", tx_queue: 0 }
//   sink: { stage: port_out, device: "net_pcap1,tx_pcap=out/sent.pcap" }
//   sink: { stage: port_out, devices: "0000:01:00.0, 0000:01:00.1" }   # ports 0 and 1
//   sink: { stage: port_out, devices: "net_pcap0,tx_pcap=p0.pcap, net_pcap1,tx_pcap=p1.pcap" }
//
// Parameters
//   device  PCI address, name of an existing port, or a virtual device    default net_null0
//           spec (created at open when no port of that name exists);
//           every packet goes there, whatever its port
//   devices the devices of ports 0, 1, 2, ... in order, comma-separated   default ""
//           (each as `device`; a word holding '=' is an argument of the
//           device before it, so vdev specs keep their commas); a packet
//           whose port has no device is dropped as `no_port`. Not with
//           `device`.
//   tx_queue  TX queue this instance transmits on                        default 0
//   queues  RX and TX queues configured on the port (when first to open) default 1
//   txd     descriptors per TX queue                                     default 1024
//   wait_link  seconds to wait at open for the port to start and its     default 0
//           link to come up (a memif peer connecting); 0 = no wait
//   when_full  drop: what a full TX queue refuses after kTxAttempts is   default drop
//           `tx_full` (a NIC's line rate); wait: retry until it goes,
//           a link between processes (memif) that must lose nothing;
//           a cut (second Ctrl-C) or a link gone down drops the rest
//   linger  seconds to keep the port up at close while its link is up,  default 0
//           so a peer can take what was sent; ends when the peer
//           disconnects (a memif receiver that has all it wanted)
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
// With `devices`, the burst is first sorted by port (PortGroups, fixed arrays) and each port's
// share goes out in one rte_eth_tx_burst on that port's device (retries as above); what each
// port sent is counted on the stage's own cache lines and shown per port in the run report.
// Every device gets the same TX queue (`tx_queue`, or the worker's index in a farm).
//
// Drops: `tx_full` — the TX queue stayed full through every attempt; `no_port` — `devices`
// names no device for the packet's port.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/port_groups.hpp"
#include "framework/metrics/port_tx.hpp"
#include "framework/metrics/relaxed_counter.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class PortSink final : public Stage, public SendsByPort {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    // The PCI addresses `device` or `devices` name, if any: EAL then probes those only.
    static std::vector<std::string> pci_devices(const ParamValues& p);
    // The devices `devices` lists, port by port (empty when not given); throws LocatedError at
    // `devices` for an empty entry, an argument without a device, or more than 256 ports.
    static std::vector<std::string> device_list(const ParamValues& p);
    // Every device of `devices` (or the one `device`) is set up, rings and all.
    static uint64_t device_ports(const ParamValues& p) { return std::max<size_t>(1, device_list(p).size()); }
    // Queue and device checks; needs no EAL.
    static void check_params(const ParamValues& p);

    // rte_eth_tx_burst calls per burst before the rest is dropped as `tx_full`.
    static constexpr unsigned kTxAttempts = 64;

    explicit PortSink(const ParamValues& params);
    ~PortSink() override;

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    // Packets each port's device took (with `devices`; empty otherwise).
    std::vector<PortTx> tx_by_port() const override;

    // The ethdev port id of output `i` (valid between open() and close()).
    uint16_t port_id(size_t i = 0) const { return port_ids_[i]; }

private:
    // Transmits `n` descriptors on output `out`; what the queue does not take is `tx_full`.
    void send(size_t out, const PacketDesc* d, uint16_t n);

    ParamValues params_;
    std::vector<std::string> devices_;  // one per output; `device` alone when not by port
    bool by_port_ = false;              // `devices` given: the descriptor's port picks the output
    uint16_t queue_;
    uint16_t queues_;
    uint16_t txd_;
    uint16_t tx_full_;
    uint16_t no_port_;
    bool wait_when_full_ = false;  // when_full: wait
    double linger_ = 0;
    std::vector<uint16_t> port_ids_;    // ethdev port of each acquired output
    bool opened_ = false;

    // Packets sent per port, written by this stage's tile only; a line per port keeps them
    // off every other stage's data.
    struct alignas(64) PortCounter : RelaxedCounter {};
    std::unique_ptr<PortCounter[]> sent_;
    PortGroups groups_;  // scratch of process(): a burst sorted by port
};

}  // namespace tp
