#include "stages/port_source.hpp"

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/capture_file.hpp"
#include "stages/ethdev_port.hpp"

namespace tp {

namespace {

// A net_pcap device replaying a file once: it goes quiet at the end instead of saying so.
bool reads_pcap_file_once(const std::string& device) {
    return device.rfind("net_pcap", 0) == 0 && device.find("rx_pcap=") != std::string::npos &&
           device.find("infinite_rx=1") == std::string::npos;
}

}  // namespace

std::string PortSource::device_of(const ParamValues& p) {
    const std::string& device = p.get_string("device");
    const std::string& file = p.get_string("file");
    if (!device.empty() && !file.empty())
        p.fail("file", "'device' and 'file' both name the port: set only one");
    if (!device.empty()) return device;
    if (file.empty())
        p.fail("device", "a port source needs 'device' (a NIC, a port name or a vdev spec) or 'file' "
                         "(a capture replayed through net_pcap)");
    if (file.find(',') != std::string::npos)
        p.fail("file", "'" + file + "': a net_pcap file name cannot hold a ','");
    // One vdev per config node: a farm's workers share it (one RX queue each, each replaying the
    // file), two nodes reading the same file do not.
    const std::string who = p.node_location().str();
    std::string spec = "net_pcap_tp" + std::to_string(std::hash<std::string>{}(who + '|' + file) % 1000000);
    const uint64_t queues = std::max<uint64_t>(1, std::min<uint64_t>(p.get_uint("queues"), 64));
    for (uint64_t q = 0; q < queues; ++q) spec += ",rx_pcap=" + file;
    return spec;
}

namespace {
void check_queue(const ParamValues& p) {
    if (p.get_uint("rx_queue") >= p.get_uint("queues"))
        p.fail("rx_queue", "'rx_queue' " + std::to_string(p.get_uint("rx_queue")) +
                               " does not exist: the port gets " + std::to_string(p.get_uint("queues")) +
                               " queue(s) ('queues')");
}
}  // namespace

void PortSource::check_params(const ParamValues& p) {
    check_queue(p);
    device_of(p);
    if (!p.get_string("file").empty()) CaptureFile::check_header(p.get_string("file"), p.where("file"));
}

PortSource::PortSource(const ParamValues& params)
    : Stage(kKind),
      params_(params),
      queue_(static_cast<uint16_t>(params.get_uint("rx_queue"))),
      queues_(static_cast<uint16_t>(params.get_uint("queues"))),
      rxd_(static_cast<uint16_t>(params.get_uint("rxd"))),
      limit_(params.get_uint("packets")),
      idle_seconds_(params.get_double("idle_timeout")) {
    check_queue(params);
    device_ = device_of(params);  // the device itself is opened (and checked) by open()
    if (!params.given("idle_timeout") && reads_pcap_file_once(device_))
        idle_seconds_ = kPcapFileIdleSeconds;
}

PortSource::~PortSource() { close(); }

void PortSource::open(StageEnv& env) {
    if (env.pool == nullptr) throw std::logic_error("port source opened without a packet pool");
    PortRequest r;
    r.device = device_;
    r.queue = queue_;
    r.queues = queues_;
    r.rxd = rxd_;
    r.promisc = params_.get_bool("promisc");
    r.pool = env.pool->get();
    pool_ = r.pool;
    r.socket = env.socket;
    try {
        port_id_ = ethdev_port_acquire(r);
    } catch (const std::runtime_error& e) {
        params_.fail(params_.get_string("device").empty() ? "file" : "device", r.device + ": " + e.what());
    }
    opened_ = true;
    desc_port_ = env.port;
    received_ = 0;
    last_rx_tsc_ = 0;
    idle_cycles_ = static_cast<uint64_t>(idle_seconds_ * double(rte_get_tsc_hz()));
}

SourceStatus PortSource::produce(Burst& b) {
    if (!opened_ || (limit_ != 0 && received_ >= limit_)) return SourceStatus::Done;
    const uint16_t want =
        limit_ == 0 ? kBurstMax : static_cast<uint16_t>(std::min<uint64_t>(kBurstMax, limit_ - received_));
    rte_mbuf* m[kBurstMax];
    const uint16_t n = rte_eth_rx_burst(port_id_, queue_, m, want);
    if (n == 0) {
        if (idle_cycles_ == 0) return SourceStatus::Idle;
        const uint64_t now = rte_rdtsc();
        if (last_rx_tsc_ == 0) last_rx_tsc_ = now;  // the silence counts from the first poll
        return now - last_rx_tsc_ >= idle_cycles_ ? SourceStatus::Done : SourceStatus::Idle;
    }
    // The PMD allocated these from the app pool inside DPDK, unseen by ThreadSanitizer: pair
    // with the release of whoever freed them last (no code without TSan).
    tsan_acquire(const_cast<rte_mempool*>(pool_));
    for (uint16_t i = 0; i < n; ++i) {
        const rte_mbuf* mb = m[i];
        const uint32_t hash = (mb->ol_flags & RTE_MBUF_F_RX_RSS_HASH) ? mb->hash.rss : 0;
        b.d[i] = PacketDesc{m[i], hash, descriptor_length(mb, pool_), desc_port_, 0};
    }
    b.n = n;
    received_ += n;
    if (idle_cycles_ != 0) last_rx_tsc_ = rte_rdtsc();
    return SourceStatus::Produced;
}

void PortSource::close() {
    if (!opened_) return;
    opened_ = false;
    ethdev_port_release(port_id_);
}

std::vector<std::string> PortSource::pci_devices(const ParamValues& p) { return pci_devices_in(p.get_string("device")); }

TILEPIPE_STAGE(PortSource, "port", "receive from one RX queue of a DPDK ethdev port (NIC or virtual PMD)",
               param<std::string>("device", "",
                                  "PCI address, existing port name, or vdev spec created at open "
                                  "(net_pcap0,rx_pcap=FILE / net_ring0 / net_null0 / net_tap0 / net_af_packet0,iface=IF); "
                                  "give this or `file`"),
               param<std::string>("file", "",
                                  "instead of `device`: a capture replayed through a net_pcap vdev made for this "
                                  "node, every RX queue replaying the whole file once"),
               param<uint16_t>("rx_queue", 0, "RX queue this instance reads (in a farm's workers: the worker's index)"),
               param<uint16_t>("queues", 1, "RX/TX queues configured on the port by its first user; > 1 turns on RSS")
                   .between(1, 64),
               param<uint16_t>("rxd", 1024, "descriptors per RX queue").at_least(1),
               param<bool>("promisc", true, "put the port in promiscuous mode"),
               param<uint64_t>("packets", 0, "end of stream after this many packets; 0 = until stopped"),
               param<double>("idle_timeout", 0,
                             "end of stream after this many seconds without a packet; 0 = never "
                             "(an rx_pcap file device without infinite_rx=1 defaults to 0.25)")
                   .at_least(0));

}  // namespace tp
