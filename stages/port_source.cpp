#include "stages/port_source.hpp"

#include <pcap/pcap.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "descriptors/wire_length.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_reader.hpp"
#include "framework/ports/ethdev_port.hpp"

namespace tp {

namespace {

// The files a net_pcap device spec reads (`rx_pcap=`), one per RX queue in order (none for
// another device).
std::vector<std::string> rx_pcap_files(const std::string& device) {
    std::vector<std::string> files;
    if (device.rfind("net_pcap", 0) != 0) return files;
    constexpr std::string_view kArg = "rx_pcap=";
    for (size_t at = device.find(','); at != std::string::npos;) {
        const size_t next = device.find(',', at + 1);
        const std::string arg = device.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
        if (arg.rfind(kArg, 0) == 0) files.push_back(arg.substr(kArg.size()));
        at = next;
    }
    return files;
}

// The files a net_pcap device replays once (none when it replays forever with infinite_rx=1).
std::vector<std::string> pcap_files_replayed_once(const std::string& device) {
    if (device.find("infinite_rx=1") != std::string::npos) return {};
    return rx_pcap_files(device);
}

// The link layer of the records net_pcap hands over from `path` (libpcap's, which is what
// net_pcap reads with). A link type the pcap source cannot turn into Ethernet is refused:
// ethdev ports carry Ethernet.
LinkLayer link_layer_of_file(const std::string& path) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    if (p == nullptr) throw std::runtime_error(err);
    const int dlt = pcap_datalink(p);
    pcap_close(p);
    const std::optional<LinkLayer> link = link_layer_of(dlt);
    if (!link) {
        const char* name = pcap_datalink_val_to_name(dlt);
        throw std::runtime_error(path + ": link type " + (name != nullptr ? name : "?") + " (" + std::to_string(dlt) +
                                 ") cannot be carried by a port (supported, turned into Ethernet: " +
                                 supported_link_types() + ")");
    }
    return *link;
}

// Rewrites a received record of `link` as the Ethernet frame the pcap source would replay
// (link_layer.hpp), in place; returns why it has none (the caller frees it) or None. net_pcap
// delivers a record in one mbuf (no scatter is configured); the frame is at most 14 bytes longer
// than the record, which the headroom holds.
SkipReason normalise_mbuf(const LinkLayer& link, rte_mbuf* m, std::vector<uint8_t>& scratch, uint32_t& wire) {
    if (m->nb_segs != 1 && rte_pktmbuf_linearize(m) != 0) return SkipReason::LinkHeaderCut;
    const uint32_t caplen = rte_pktmbuf_data_len(m);
    const EthernetFrame f = to_ethernet(link, rte_pktmbuf_mtod(m, const uint8_t*), caplen, caplen, scratch);
    if (f.skip != SkipReason::None) return f.skip;
    if (f.length > caplen && rte_pktmbuf_prepend(m, static_cast<uint16_t>(f.length - caplen)) == nullptr)
        return SkipReason::LinkHeaderCut;
    // memmove: a frame that is a part of the record overlaps it.
    std::memmove(rte_pktmbuf_mtod(m, uint8_t*), f.data, f.length);
    m->data_len = static_cast<uint16_t>(f.length);
    m->pkt_len = f.length;
    wire = f.wire_length;
    return SkipReason::None;
}

// Records libpcap reads from `path` before its end (or its first bad record): what net_pcap
// replays from it.
uint64_t records_in(const std::string& path) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    if (p == nullptr) throw std::runtime_error(err);
    uint64_t n = 0;
    pcap_pkthdr* h;
    const u_char* data;
    while (pcap_next_ex(p, &h, &data) == 1) ++n;
    pcap_close(p);
    return n;
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
    const std::string device = device_of(p);
    const bool from_file = !p.get_string("file").empty();
    if (from_file) CaptureFile::check_header(p.get_string("file"), p.where("file"));
    // net_pcap ends a file at a damaged record, counting it only among the port's ierrors:
    // `strict` reads the records first and refuses the file naming the record, as pcap's does.
    if (from_file && p.get_bool("strict")) CaptureFile::check_records(p.get_string("file"), p.where("file"));
    try {
        for (const std::string& f : rx_pcap_files(device)) link_layer_of_file(f);
    } catch (const std::runtime_error& e) {
        p.fail(from_file ? "file" : "device", e.what());
    }
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
    no_mbuf_ = declare_event("rx_nombuf");
    missed_ = declare_event("imissed");
    errors_ = declare_event("ierrors");
    skipped_event_ = declare_event("capture.skipped_records");
    for (size_t r = 1; r < kSkipReasons; ++r)
        skip_reason_event_[r] = declare_event(std::string("capture.skipped.") + skip_reason_name(SkipReason(r)));
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
    r.source = true;
    pool_ = r.pool;
    r.socket = env.socket;
    r.wait_link = params_.get_double("wait_link");
    try {
        port_id_ = ethdev_port_acquire(r);
    } catch (const std::runtime_error& e) {
        params_.fail(params_.get_string("device").empty() ? "file" : "device", r.device + ": " + e.what());
    }
    opened_ = true;
    replay_ = {};
    link_ = LinkLayer{};
    skipped_ = {};
    if (const std::vector<std::string> read = rx_pcap_files(device_); queue_ < read.size()) {
        try {
            link_ = link_layer_of_file(read[queue_]);
        } catch (const std::runtime_error& e) {
            params_.fail(params_.get_string("device").empty() ? "file" : "device", e.what());
        }
    }
    const std::vector<std::string> files = pcap_files_replayed_once(device_);
    if (queue_ < files.size()) {
        try {
            for (size_t q = 0; q < files.size(); ++q) {
                const uint64_t n = records_in(files[q]);
                replay_.port_total += n;
                if (q == queue_) replay_.queue_total = n;
            }
        } catch (const std::runtime_error& e) {
            params_.fail(params_.get_string("device").empty() ? "file" : "device", e.what());
        }
        replay_.active = true;
    }
    desc_port_ = env.port;
    wire_offset_ = wire_length_offset();
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
        if (replay_.active && replay_ended()) return SourceStatus::Done;
        if (idle_cycles_ == 0) return SourceStatus::Idle;
        const uint64_t now = rte_rdtsc();
        if (last_rx_tsc_ == 0) last_rx_tsc_ = now;  // the silence counts from the first poll
        return now - last_rx_tsc_ >= idle_cycles_ ? SourceStatus::Done : SourceStatus::Idle;
    }
    // The PMD allocated these from the app pool inside DPDK, unseen by ThreadSanitizer: pair
    // with the release of whoever freed them last (no code without TSan).
    tsan_acquire(const_cast<rte_mempool*>(pool_));
    if (link_.kind != LinkKind::Ethernet) return produce_normalised(b, m, n);
    for (uint16_t i = 0; i < n; ++i) {
        const rte_mbuf* mb = m[i];
        wire_length(m[i], wire_offset_) = mb->pkt_len;
        const uint32_t hash = (mb->ol_flags & RTE_MBUF_F_RX_RSS_HASH) ? mb->hash.rss : 0;
        b.d[i] = PacketDesc{m[i], hash, descriptor_length(mb, pool_), desc_port_, 0};
    }
    b.n = n;
    received_ += n;
    if (idle_cycles_ != 0) last_rx_tsc_ = rte_rdtsc();
    return SourceStatus::Produced;
}

// A capture of another link type through net_pcap: each record becomes the Ethernet frame the
// pcap source would replay; records with none are freed and counted (see close()).
SourceStatus PortSource::produce_normalised(Burst& b, rte_mbuf** m, uint16_t n) {
    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
        uint32_t wire = 0;
        const SkipReason skip = normalise_mbuf(link_, m[i], scratch_, wire);
        if (skip != SkipReason::None) {
            skipped_.add(skip, received_ + i + 1);
            rte_pktmbuf_free(m[i]);
            continue;
        }
        wire_length(m[i], wire_offset_) = wire;
        b.d[kept++] = PacketDesc{m[i], 0, descriptor_length(m[i], pool_), desc_port_, 0};
    }
    b.n = kept;
    received_ += n;
    if (idle_cycles_ != 0) last_rx_tsc_ = rte_rdtsc();
    return kept != 0 ? SourceStatus::Produced : SourceStatus::Idle;
}

bool PortSource::replay_ended() {
    if (received_ >= replay_.queue_total) return true;  // every record of this queue's file came
    // Some were lost on the way (no mbuf, errors): the device-wide counters say when every
    // record of every queue's file was either received or lost.
    rte_eth_stats st{};
    if (rte_eth_stats_get(port_id_, &st) != 0) return false;
    return st.ipackets + st.rx_nombuf + st.imissed + st.ierrors >= replay_.port_total;
}

// The port counted errors while replaying its file: net_pcap stops at a record it cannot read
// and says nothing of where. Reads the file (only now, on this rare path) to name the record.
void PortSource::warn_damaged_file() const {
    const std::string& path = params_.get_string("file");
    try {
        CaptureReader reader(path);
        for (;;) {
            const CaptureReader::Next n = reader.next();
            if (n == CaptureReader::Next::Record || n == CaptureReader::Next::Skipped) continue;
            if (n == CaptureReader::Next::End) return;
            const bool cut = n == CaptureReader::Next::Truncated;
            spdlog::warn("{}: {}: {}; the port replayed the records before it, the rest counted as ierrors{}", device_, path,
                         cut ? reader.truncation() : reader.error(), cut ? "" : " (strict: true refuses such a file)");
            return;
        }
    } catch (const std::exception& e) {
        spdlog::warn("{}: {}", device_, e.what());
    }
}

void PortSource::close() {
    if (!opened_) return;
    opened_ = false;
    for (size_t r = 1; r < kSkipReasons; ++r) {
        if (skipped_.count[r] == 0) continue;
        spdlog::warn("{}: skipped {} {} with no Ethernet form (first: record {} of queue {}); counted as "
                     "capture.skipped.{}",
                     device_, skipped_.count[r], skip_reason_text(SkipReason(r)), skipped_.first[r], queue_,
                     skip_reason_name(SkipReason(r)));
        count_event(skip_reason_event_[r], skipped_.count[r]);
    }
    if (skipped_.total() != 0) count_event(skipped_event_, skipped_.total());
    const RxLosses lost = ethdev_port_take_rx_losses(port_id_);
    count_event(no_mbuf_, lost.no_mbuf);
    count_event(missed_, lost.missed);
    count_event(errors_, lost.errors);
    if (lost.errors != 0 && !params_.get_string("file").empty()) warn_damaged_file();
    stats().lost_before.add(lost.total());
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
                                  "node, every RX queue replaying the whole file once; other link types than "
                                  "Ethernet become Ethernet as the pcap source makes them").input_file(),
               param<bool>("strict", false,
                           "with `file`: refuse a capture with a damaged record, naming it (as tcpdump does), instead "
                           "of replaying the records before it (net_pcap counts the rest among ierrors)"),
               param<uint16_t>("rx_queue", 0, "RX queue this instance reads (in a farm's workers: the worker's index)"),
               param<uint16_t>("queues", 1, "RX/TX queues configured on the port by its first user; > 1 turns on RSS")
                   .between(1, 64),
               param<uint16_t>("rxd", 1024, "descriptors per RX queue").at_least(1),
               param<bool>("promisc", true, "put the port in promiscuous mode"),
               param<double>("wait_link", 0,
                             "seconds to wait at open for the port to start and its link to come up "
                             "(a memif peer: the other process connecting); 0 = do not wait")
                   .between(0, 3600),
               param<uint64_t>("packets", 0, "end of stream after this many packets; 0 = until stopped"),
               param<double>("idle_timeout", 0,
                             "end of stream after this many seconds without a packet; 0 = never "
                             "(a file replayed once ends after its last record, received or lost)")
                   .at_least(0));

}  // namespace tp
