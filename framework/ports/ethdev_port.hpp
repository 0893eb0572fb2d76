// EthdevPort: the process-wide registry of DPDK ethdev ports that `port` and `port_out` stages
// use, so that several stage instances (one per RX or TX queue) share one configured port.
//
// A device is named as a user writes it: a PCI address (`0000:01:00.0`), the name of a port
// that already exists, or a virtual device spec (`net_pcap0,rx_pcap=in.pcap`, `net_null0`,
// `net_ring0`) which is created on the vdev bus (rte_eal_hotplug_add) when no port of that name exists yet.
//
// The first user of a port configures it (RSS over IP/TCP/UDP when it asks for more than one
// queue and the device can hash), sets up every RX queue (receiving into the user's pool) and
// every TX queue, resets its statistics, and starts it; later users only check that their queue exists. The last
// user to release it drains what its RX queues still hold (freeing those mbufs), stops it, and
// removes the virtual device when the registry created it. RX and TX get the same number of
// queues.
//
// Thread-safety: acquire and release are serialised by one mutex (they run at open and close,
// never on the hot path). Errors are std::runtime_error carrying DPDK's reason; the stages
// turn them into LocatedError at their `device` parameter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct rte_mempool;

namespace tp {

struct PortRequest {
    std::string device;            // as the user wrote it
    uint16_t queue = 0;            // the queue this user polls (RX for a source, TX for a sink)
    uint16_t queues = 1;           // RX and TX queues to configure when first
    uint16_t rxd = 1024;           // descriptors per RX queue
    uint16_t txd = 1024;           // descriptors per TX queue
    bool promisc = true;           // promiscuous mode when first
    rte_mempool* pool = nullptr;   // where RX queues receive into
    bool source = false;           // polls RX queue `queue`: it receives into `pool`, also when
                                   // another user configured the port first
    int socket = -1;               // NUMA node for the queues, -1 = the port's
    double wait_link = 0;          // seconds to wait when first: for the device to start (a
                                   // memif client whose server is not up yet) and for its link
                                   // to come up (a memif peer connecting); 0 = neither. The
                                   // wait holds the registry's lock: ports open one at a time
};

// Opens (creating, configuring and starting when first) the port `r.device` names and returns
// its ethdev port id. Throws std::runtime_error with the reason when the device is unknown,
// cannot be created, configured or started, or lacks queue `r.queue`.
uint16_t ethdev_port_acquire(const PortRequest& r);

// The PCI address a `device` spec names ("0000:3b:00.0,arg=1" -> {"0000:3b:00.0"}), or none
// for a virtual device or an existing port's name: what EAL must be allowed to probe.
std::vector<std::string> pci_devices_in(const std::string& device);

// What a port's device received but never handed to an RX burst, from its statistics
// (rte_eth_stats_get): no mbuf to receive into, missed (RX ring full), receive errors.
struct RxLosses {
    uint64_t no_mbuf = 0, missed = 0, errors = 0;
    uint64_t total() const { return no_mbuf + missed + errors; }
};

// Losses since the registry configured the port that no earlier call took: the counters are
// port-wide, so each loss is handed to exactly one of the port's users, whichever asks first.
RxLosses ethdev_port_take_rx_losses(uint16_t port_id);

// Drops one use of `port_id`; the last one stops it (and removes a virtual device it created).
void ethdev_port_release(uint16_t port_id);

// Current users of `port_id` (0 when the registry does not hold it).
uint32_t ethdev_port_users(uint16_t port_id);

// How many times the registry has configured a port since the process started.
uint64_t ethdev_port_configurations();

}  // namespace tp
