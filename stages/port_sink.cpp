#include "stages/port_sink.hpp"

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "framework/ports/ethdev_port.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp {

namespace {

std::string trimmed(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

}  // namespace

std::vector<std::string> PortSink::device_list(const ParamValues& p) {
    const std::string& text = p.get_string("devices");
    std::vector<std::string> out;
    if (text.empty()) return out;
    size_t at = 0;
    for (size_t word = 0;; ++word) {
        const size_t comma = text.find(',', at);
        const std::string w = trimmed(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (w.empty())
            p.fail("devices", "'devices' word " + std::to_string(word + 1) +
                                  " is empty: list the device of each port, comma-separated");
        if (w.find('=') != std::string::npos) {
            // A vdev argument (`tx_pcap=FILE`): device names never hold '='.
            if (out.empty())
                p.fail("devices", "'devices' starts with the argument '" + w + "': name its device first");
            out.back() += "," + w;
        } else {
            out.push_back(w);
        }
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    if (out.size() > PortGroups::kPorts)
        p.fail("devices", "'devices' lists " + std::to_string(out.size()) + " ports; a port is 0-" +
                              std::to_string(PortGroups::kPorts - 1));
    return out;
}

void PortSink::check_params(const ParamValues& p) {
    const uint64_t queue = p.get_uint("tx_queue"), queues = p.get_uint("queues");
    if (queue >= queues)
        p.fail("tx_queue", "'tx_queue' " + std::to_string(queue) + " does not exist: the port gets " +
                               std::to_string(queues) + " queue(s) ('queues')");
    if (p.given("device") && p.given("devices") && !p.get_string("devices").empty())
        p.fail("devices", "'device' and 'devices' both name where packets go: give 'devices' alone "
                          "(port 0 first)");
    device_list(p);
}

PortSink::PortSink(const ParamValues& params) : Stage(kKind), params_(params) {
    check_params(params);
    queue_ = static_cast<uint16_t>(params.get_uint("tx_queue"));
    queues_ = static_cast<uint16_t>(params.get_uint("queues"));
    txd_ = static_cast<uint16_t>(params.get_uint("txd"));
    devices_ = device_list(params);
    by_port_ = !devices_.empty();
    if (!by_port_) devices_.push_back(params.get_string("device"));
    sent_ = std::make_unique<PortCounter[]>(devices_.size());
    wait_when_full_ = params.get_string("when_full") == "wait";
    linger_ = params.get_double("linger");
    tx_full_ = declare_drop("tx_full");
    no_port_ = declare_drop("no_port");
}

PortSink::~PortSink() { close(); }

void PortSink::open(StageEnv& env) {
    if (env.pool == nullptr) throw std::logic_error("port sink opened without a packet pool");
    PortRequest r;
    r.queue = queue_;
    r.queues = queues_;
    r.txd = txd_;
    r.pool = env.pool->get();  // RX queues of a port the sink configures first
    r.socket = env.socket;
    r.wait_link = params_.get_double("wait_link");
    port_ids_.clear();
    for (const std::string& device : devices_) {
        r.device = device;
        try {
            port_ids_.push_back(ethdev_port_acquire(r));
        } catch (const std::runtime_error& e) {
            for (uint16_t id : port_ids_) ethdev_port_release(id);
            port_ids_.clear();
            const std::string port = by_port_ ? "port " + std::to_string(&device - devices_.data()) + ": " : "";
            params_.fail(by_port_ ? "devices" : "device", port + device + ": " + e.what());
        }
    }
    opened_ = true;
}

void PortSink::send(size_t out, const PacketDesc* d, uint16_t n) {
    rte_mbuf* m[kBurstMax];
    for (uint16_t i = 0; i < n; ++i) m[i] = d[i].mbuf;
    // The PMD frees what it sends inside DPDK, unseen by ThreadSanitizer (no code without TSan).
    release_to_pool(m, n);
    const uint16_t port = port_ids_[out];
    uint16_t sent = 0;
    for (unsigned attempt = 0; attempt < kTxAttempts && sent < n; ++attempt) {
        const uint16_t k = rte_eth_tx_burst(port, queue_, m + sent, n - sent);
        sent += k;
        if (k == 0) rte_pause();
    }
    // when_full: wait. The queue drains as the peer takes packets; meanwhile this tile yields
    // its CPU (the peer may share it). Only a cut, or a link that went down (the peer gone,
    // nothing would ever drain it), gives up: those packets are tx_full drops.
    for (uint32_t round = 1; wait_when_full_ && sent < n; ++round) {
        const uint16_t k = rte_eth_tx_burst(port, queue_, m + sent, n - sent);
        sent += k;
        if (k != 0) continue;
        yield_cpu();
        if ((round & 1023) == 0) {
            rte_eth_link link{};
            if (cut_requested() || (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_DOWN))
                break;
        }
    }
    for (uint16_t i = sent; i < n; ++i) drop(d[i], tx_full_);
    if (by_port_) sent_[out].add(sent);
}

void PortSink::process(Burst& b) {
    if (!opened_) {
        for (const PacketDesc& d : b) drop(d, tx_full_);
        b.n = 0;
        return;
    }
    if (!by_port_) {
        send(0, b.d, b.n);
        b.n = 0;
        return;
    }
    groups_.sort(b);
    for (uint16_t g = 0; g < groups_.groups; ++g) {
        const PortGroups::Group& gr = groups_.group[g];
        const PacketDesc* d = groups_.d + gr.begin;
        const uint16_t n = static_cast<uint16_t>(gr.end - gr.begin);
        if (gr.port < devices_.size()) {
            send(gr.port, d, n);
        } else {
            for (uint16_t i = 0; i < n; ++i) drop(d[i], no_port_);
        }
    }
    b.n = 0;
}

void PortSink::close() {
    if (!opened_) return;
    opened_ = false;
    // linger: a port stopped now takes with it what its peer has not read yet (memif's rings
    // go with the connection); keep it up until the peer disconnects, at most `linger` s.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(linger_);
    for (uint16_t id : port_ids_) {
        for (rte_eth_link link{}; linger_ > 0 && std::chrono::steady_clock::now() < deadline;) {
            if (rte_eth_link_get_nowait(id, &link) != 0 || link.link_status == RTE_ETH_LINK_DOWN) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        ethdev_port_release(id);
    }
}

std::vector<PortTx> PortSink::tx_by_port() const {
    std::vector<PortTx> out;
    if (!by_port_) return out;
    for (size_t i = 0; i < devices_.size(); ++i)
        out.push_back(PortTx{static_cast<uint16_t>(i), devices_[i], sent_[i].get()});
    return out;
}

std::vector<std::string> PortSink::pci_devices(const ParamValues& p) {
    std::vector<std::string> pci = pci_devices_in(p.get_string("device"));
    if (!p.given("devices") || p.get_string("devices").empty()) return pci;
    pci.clear();  // `device` is not used when `devices` is given
    try {
        for (const std::string& d : device_list(p))
            for (std::string& a : pci_devices_in(d)) pci.push_back(std::move(a));
    } catch (const LocatedError&) {
        // check_params reports it
    }
    return pci;
}

TILEPIPE_STAGE(PortSink, "port_out",
               "sink: transmit on a TX queue of a DPDK ethdev port (NIC or virtual PMD), or of the port each "
               "packet was routed to",
               param<std::string>("device", "net_null0",
                                  "PCI address, existing port name, or vdev spec created at open "
                                  "(net_null0 frees packets; net_pcap0,tx_pcap=FILE writes them); every "
                                  "packet goes there"),
               param<std::string>("devices", "",
                                  "devices of ports 0, 1, 2, ... (comma-separated, each as 'device'; a word "
                                  "with '=' is an argument of the device before it): a packet goes to its "
                                  "port's device, one without is dropped as no_port; not with 'device'"),
               param<uint16_t>("tx_queue", 0, "TX queue this instance transmits on (on every device)"),
               param<uint16_t>("queues", 1, "RX/TX queues configured on the port by its first user").between(1, 64),
               param<uint16_t>("txd", 1024, "descriptors per TX queue").at_least(1),
               param<double>("wait_link", 0,
                             "seconds to wait at open for the port to start and its link to come up "
                             "(a memif peer: the other process connecting); 0 = do not wait")
                   .between(0, 3600),
               param<std::string>("when_full", "drop",
                                  "drop: what a full TX queue still refuses after a few retries is a tx_full drop "
                                  "(a NIC's line rate); wait: retry until it goes (a memif link to another process "
                                  "that must lose nothing; a cut or a link gone down drops the rest)",
                                  {"drop", "wait"}),
               param<double>("linger", 0,
                             "seconds to keep the port up at close while its link is up, so the peer can take "
                             "what was sent (memif); ends when the peer disconnects")
                   .between(0, 3600));

}  // namespace tp
