#include "framework/ports/ethdev_port.hpp"

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"

namespace tp {

namespace {

struct PortUse {
    uint32_t users = 0;
    uint16_t queues = 0;
    std::string vdev;  // the virtual device the registry created, to remove at the end
    RxLosses taken;    // device counters already handed out (or there before configuring)
    std::vector<rte_mempool*> rx_pool;  // per RX queue: the pool it receives into
    uint16_t rxd = 0;                   // descriptors per RX queue, as the device took them
    unsigned socket = SOCKET_ID_ANY;    // where the queues are
};

RxLosses read_rx_losses(uint16_t pid) {
    rte_eth_stats st{};
    if (rte_eth_stats_get(pid, &st) != 0) return {};
    return RxLosses{st.rx_nombuf, st.imissed, st.ierrors};
}

std::mutex g_ports_mutex;
std::map<uint16_t, PortUse> g_ports;
uint64_t g_configurations = 0;

// Most mbufs taken back out of one RX queue at the last release: a generator (net_null)
// never runs dry.
constexpr uint32_t kDrainMax = 1u << 16;

std::string dpdk_reason(int rc) { return rte_strerror(rc < 0 ? -rc : rc); }

bool looks_like_pci_address(const std::string& name) {
    // DDDD:BB:DD.F or BB:DD.F
    const auto colon = name.rfind(':');
    const auto dot = name.rfind('.');
    return colon != std::string::npos && dot != std::string::npos && dot > colon &&
           name.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos;
}

}  // namespace

std::vector<std::string> pci_devices_in(const std::string& device) {
    const std::string name = device.substr(0, device.find(','));
    if (looks_like_pci_address(name)) return {name};
    return {};
}

namespace {

std::string known_ports() {
    std::string list;
    uint16_t pid;
    RTE_ETH_FOREACH_DEV(pid) {
        char name[RTE_ETH_NAME_MAX_LEN];
        if (rte_eth_dev_get_name_by_port(pid, name) != 0) continue;
        list += list.empty() ? "" : ", ";
        list += name;
    }
    return list.empty() ? "none" : list;
}

// Finds or creates the port; sets `created` to the vdev name when it made one.
uint16_t find_or_create(const std::string& device, std::string& created) {
    const auto comma = device.find(',');
    const std::string name = device.substr(0, comma);
    const std::string args = comma == std::string::npos ? "" : device.substr(comma + 1);
    if (name.empty()) throw std::runtime_error("empty device name");
    uint16_t pid;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) == 0) return pid;

    if (name.rfind("net_", 0) == 0) {
        const int rc = rte_eal_hotplug_add("vdev", name.c_str(), args.c_str());
        if (rc != 0)
            throw std::runtime_error("cannot create virtual device '" + device + "': " +
                                     dpdk_reason(rc));
        if (rte_eth_dev_get_port_by_name(name.c_str(), &pid) != 0) {
            rte_eal_hotplug_remove("vdev", name.c_str());
            throw std::runtime_error("virtual device '" + device + "' is not an ethdev port");
        }
        created = name;
        return pid;
    }
    if (looks_like_pci_address(name)) {
        const int rc = rte_eal_hotplug_add("pci", name.c_str(), args.c_str());
        if (rc == 0 && rte_eth_dev_get_port_by_name(name.c_str(), &pid) == 0) return pid;
        throw std::runtime_error("cannot probe PCI device '" + name + "'" +
                                 (rc != 0 ? ": " + dpdk_reason(rc) : std::string()) +
                                 " (is it bound to vfio-pci or uio, and allowed by EAL?)");
    }
    throw std::runtime_error("no port named '" + name + "' (ports: " + known_ports() +
                             "; a virtual device spec starts with its driver, e.g. net_null0)");
}

std::string format_seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
}

void configure_and_start(uint16_t pid, const PortRequest& r, PortUse& use) {
    rte_eth_dev_info info{};
    int rc = rte_eth_dev_info_get(pid, &info);
    if (rc != 0) throw std::runtime_error("cannot read device info: " + dpdk_reason(rc));
    if (r.queues > info.max_rx_queues || r.queues > info.max_tx_queues)
        throw std::runtime_error(std::to_string(r.queues) + " queues asked, the device has at most " +
                                 std::to_string(info.max_rx_queues) + " RX and " +
                                 std::to_string(info.max_tx_queues) + " TX queues");

    rte_eth_conf conf{};
    if (r.queues > 1) {
        const uint64_t hf =
            info.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
        if (hf != 0) {
            conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf = hf;
            if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH)
                conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
        }
    }
    if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
        conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    rc = rte_eth_dev_configure(pid, r.queues, r.queues, &conf);
    if (rc != 0) throw std::runtime_error("cannot configure the port: " + dpdk_reason(rc));
    ++g_configurations;

    uint16_t rxd = r.rxd;
    uint16_t txd = r.txd;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &rxd, &txd);
    if (rc != 0) throw std::runtime_error("cannot fit the descriptor counts: " + dpdk_reason(rc));
    int socket = r.socket >= 0 ? r.socket : rte_eth_dev_socket_id(pid);
    if (socket < 0) socket = SOCKET_ID_ANY;
    use.rxd = rxd, use.socket = static_cast<unsigned>(socket), use.rx_pool.assign(r.queues, r.pool);
    for (uint16_t q = 0; q < r.queues; ++q) {
        rc = rte_eth_rx_queue_setup(pid, q, rxd, static_cast<unsigned>(socket), nullptr, r.pool);
        if (rc != 0)
            throw std::runtime_error("cannot set up RX queue " + std::to_string(q) + ": " + dpdk_reason(rc));
        rc = rte_eth_tx_queue_setup(pid, q, txd, static_cast<unsigned>(socket), nullptr);
        if (rc != 0)
            throw std::runtime_error("cannot set up TX queue " + std::to_string(q) + ": " + dpdk_reason(rc));
    }
    if (r.promisc) {
        rc = rte_eth_promiscuous_enable(pid);
        if (rc != 0 && rc != -ENOTSUP)
            throw std::runtime_error("cannot enable promiscuous mode: " + dpdk_reason(rc));
    }
    // With wait_link, a start that fails is tried again until the deadline (a memif client
    // cannot start before its server listens), then the link is awaited (a memif server's
    // comes up when its client connects): packets sent before that would be dropped.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(r.wait_link);
    while ((rc = rte_eth_dev_start(pid)) != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (rc != 0)
        throw std::runtime_error("cannot start the port: " + dpdk_reason(rc) +
                                 (r.wait_link > 0 ? " (tried for " + format_seconds(r.wait_link) + ")" : ""));
    if (r.wait_link <= 0) return;
    for (;;) {
        rte_eth_link link{};
        if (rte_eth_link_get_nowait(pid, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) return;
        if (std::chrono::steady_clock::now() >= deadline)
            throw std::runtime_error("its link did not come up within " + format_seconds(r.wait_link) +
                                     " (wait_link): is the peer running?");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// A later source's RX queue receives into that source's pool (an app has one per place of its
// sources): at setup, before any packet is read, the port stops, the queue is set up again
// (releasing the old ring gives its mbufs back to their pool) and the port starts again.
void receive_into(uint16_t pid, PortUse& use, const PortRequest& r) {
    const std::string what = "cannot move port " + std::to_string(pid) + " RX queue " + std::to_string(r.queue) + " to its source's pool: ";
    int rc = rte_eth_dev_stop(pid);
    if (rc != 0) throw std::runtime_error(what + "rte_eth_dev_stop: " + dpdk_reason(rc));
    rc = rte_eth_rx_queue_setup(pid, r.queue, use.rxd, use.socket, nullptr, r.pool);
    if (rc != 0) {
        // The port's earlier users run on: the queue goes back on its previous pool (a PMD may
        // have released the old one already) and the port starts again. Best effort: when that
        // fails too, the port stays stopped (and the queue maybe unset) until its last user
        // releases it, and the error says so.
        int back = rte_eth_rx_queue_setup(pid, r.queue, use.rxd, use.socket, nullptr, use.rx_pool[r.queue]);
        const char* call = "rte_eth_rx_queue_setup";
        if (back == 0) back = rte_eth_dev_start(pid), call = "rte_eth_dev_start";
        throw std::runtime_error(what + "rte_eth_rx_queue_setup: " + dpdk_reason(rc) +
                                 (back == 0 ? std::string(" (the queue stays on its previous pool, the port runs on)")
                                            : " (restoring the previous queue failed too, " + std::string(call) + ": " +
                                                  dpdk_reason(back) + "; the port stays stopped)"));
    }
    use.rx_pool[r.queue] = r.pool;
    rc = rte_eth_dev_start(pid);
    if (rc != 0) throw std::runtime_error(what + "rte_eth_dev_start: " + dpdk_reason(rc) + " (the port stays stopped)");
}

// Frees what the port's queues still hold, stops it, and removes a device the registry made.
void shut_down(uint16_t pid, const PortUse& use) {
    rte_eth_dev_info info{};
    const bool started = rte_eth_dev_info_get(pid, &info) == 0 && info.nb_rx_queues > 0;
    if (started) {
        rte_mbuf* m[32];
        for (uint16_t q = 0; q < use.queues; ++q) {
            rte_eth_tx_done_cleanup(pid, q, 0);
            for (uint32_t drained = 0; drained < kDrainMax;) {
                const uint16_t n = rte_eth_rx_burst(pid, q, m, 32);
                if (n == 0) break;
                free_packets(m, n);
                drained += n;
            }
        }
    }
    rte_eth_dev_stop(pid);
    if (!use.vdev.empty()) {
        rte_eth_dev_close(pid);
        rte_eal_hotplug_remove("vdev", use.vdev.c_str());
    }
}

}  // namespace

uint16_t ethdev_port_acquire(const PortRequest& r) {
    std::lock_guard<std::mutex> lock(g_ports_mutex);
    std::string created;
    const uint16_t pid = find_or_create(r.device, created);
    auto it = g_ports.find(pid);
    if (it != g_ports.end()) {
        if (r.queue >= it->second.queues)
            throw std::runtime_error("queue " + std::to_string(r.queue) + " does not exist: the port's first user configured " +
                                     std::to_string(it->second.queues) + " queue(s)");
        if (r.source && r.pool != it->second.rx_pool[r.queue]) receive_into(pid, it->second, r);
        ++it->second.users;
        return pid;
    }
    if (r.queue >= r.queues)
        throw std::runtime_error("queue " + std::to_string(r.queue) + " does not exist with " +
                                 std::to_string(r.queues) + " queue(s)");
    PortUse use;
    use.queues = r.queues;
    use.vdev = created;
    try {
        configure_and_start(pid, r, use);
    } catch (...) {
        rte_eth_dev_stop(pid);
        if (!created.empty()) {
            rte_eth_dev_close(pid);
            rte_eal_hotplug_remove("vdev", created.c_str());
        }
        throw;
    }
    use.users = 1;
    // Counters start at zero where the device can reset them, else from what they say now.
    rte_eth_stats_reset(pid);
    use.taken = read_rx_losses(pid);
    g_ports.emplace(pid, use);
    return pid;
}

void ethdev_port_release(uint16_t port_id) {
    std::lock_guard<std::mutex> lock(g_ports_mutex);
    auto it = g_ports.find(port_id);
    if (it == g_ports.end()) return;
    if (--it->second.users > 0) return;
    shut_down(port_id, it->second);
    g_ports.erase(it);
}

RxLosses ethdev_port_take_rx_losses(uint16_t port_id) {
    std::lock_guard<std::mutex> lock(g_ports_mutex);
    auto it = g_ports.find(port_id);
    if (it == g_ports.end()) return {};
    const RxLosses now = read_rx_losses(port_id);
    RxLosses& taken = it->second.taken;
    // A counter that went backwards (a device reset behind our back) restarts from zero.
    const auto since = [](uint64_t now, uint64_t before) { return now >= before ? now - before : now; };
    const RxLosses fresh{since(now.no_mbuf, taken.no_mbuf), since(now.missed, taken.missed),
                         since(now.errors, taken.errors)};
    taken = now;
    return fresh;
}

uint32_t ethdev_port_users(uint16_t port_id) {
    std::lock_guard<std::mutex> lock(g_ports_mutex);
    auto it = g_ports.find(port_id);
    return it == g_ports.end() ? 0 : it->second.users;
}

uint64_t ethdev_port_configurations() {
    std::lock_guard<std::mutex> lock(g_ports_mutex);
    return g_configurations;
}

}  // namespace tp
