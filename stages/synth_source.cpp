#include "stages/synth_source.hpp"

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include <algorithm>
#include <cstring>

#include "descriptors/wire_length.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {
constexpr uint16_t kImixPattern[12] = {64, 64, 64, 64, 64, 64, 64, 594, 594, 594, 594, 1514};  // 7:4:1
constexpr uint64_t kMinFrame = 60;    // Ethernet minimum without FCS
constexpr uint64_t kMaxFrame = 9000;  // a jumbo frame
constexpr uint64_t kMaxFlows = 1u << 16;

void build_frame(uint8_t* p, uint16_t len, uint32_t flow, bool tcp) {
    std::memset(p, 0, len);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
    const rte_ether_addr src{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
    const rte_ether_addr dst{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
    eth->src_addr = src;
    eth->dst_addr = dst;
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(len - sizeof(rte_ether_hdr)));
    ip->time_to_live = 64;
    ip->next_proto_id = tcp ? IPPROTO_TCP : IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, (flow >> 8) & 0xff, flow & 0xff));
    ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 128, (flow >> 8) & 0xff, flow & 0xff));
    ip->hdr_checksum = rte_ipv4_cksum(ip);

    const uint16_t sport = static_cast<uint16_t>(1024 + flow % 64512);
    const uint16_t dport = static_cast<uint16_t>(80 + flow % 16);
    if (tcp) {
        auto* th = reinterpret_cast<rte_tcp_hdr*>(ip + 1);
        th->src_port = rte_cpu_to_be_16(sport);
        th->dst_port = rte_cpu_to_be_16(dport);
        th->sent_seq = rte_cpu_to_be_32(flow);
        th->data_off = 5 << 4;
        th->tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
        th->rx_win = rte_cpu_to_be_16(65535);
        th->cksum = rte_ipv4_udptcp_cksum(ip, th);
    } else {
        auto* uh = reinterpret_cast<rte_udp_hdr*>(ip + 1);
        uh->src_port = rte_cpu_to_be_16(sport);
        uh->dst_port = rte_cpu_to_be_16(dport);
        uh->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(len - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr)));
        uh->dgram_cksum = rte_ipv4_udptcp_cksum(ip, uh);
    }
}
}  // namespace

// `size` as a decimal frame length, or imix; fails at the parameter otherwise. Digits only, so
// neither a sign, a base prefix nor trailing text slips through.
std::vector<uint16_t> SynthSource::size_pattern(const ParamValues& p) {
    const std::string& size = p.get_string("size");
    if (size == "imix") return {std::begin(kImixPattern), std::end(kImixPattern)};
    uint64_t s = 0;
    bool ok = !size.empty() && size.size() <= 5;
    for (char c : size) {
        ok = ok && c >= '0' && c <= '9';
        if (ok) s = s * 10 + uint64_t(c - '0');
    }
    if (!ok || s < kMinFrame || s > kMaxFrame)
        p.fail("size", "size must be imix or a frame length from 60 to 9000 bytes, got '" + size + "'");
    return {static_cast<uint16_t>(s)};
}

void SynthSource::check_params(const ParamValues& p) {
    size_pattern(p);  // flows and duration: their declared ranges, checked as they are parsed
    // 0 means off (so `--set synth.pps=0` switches a config's pace off); both set is ambiguous.
    if (p.get_double("pps") > 0 && p.get_double("mbps") > 0)
        p.fail("mbps", "'mbps' paces the stream but 'pps' already does: set at most one of pps, mbps");
}

void SynthSource::check_data_room(const ParamValues& p, uint32_t data_room) {
    for (const uint16_t s : size_pattern(p))
        if (s > data_room)
            p.fail("size", "frame size " + std::to_string(s) + " exceeds the pool's data room " +
                               std::to_string(data_room) + " (raise pool.data_room)");
}

SynthSource::SynthSource(const ParamValues& p) : Stage(kKind) {
    check_params(p);
    pattern_ = size_pattern(p);
    flows_ = static_cast<uint32_t>(p.get_uint("flows"));
    proto_ = p.get_string("proto");
    count_ = p.get_uint("count");
    duration_ = p.get_double("duration");
    pps_ = p.get_double("pps");
    mbps_ = p.get_double("mbps");
    // One template per distinct size; the pattern becomes indices into them.
    for (uint16_t& s : pattern_) {
        auto it = std::find(sizes_.begin(), sizes_.end(), s);
        if (it == sizes_.end()) it = sizes_.insert(sizes_.end(), s);
        s = static_cast<uint16_t>(it - sizes_.begin());
    }
}

void SynthSource::open(StageEnv& env) {
    env_ = env;
    wire_offset_ = wire_length_offset();
    for (uint16_t s : sizes_)
        if (s > env.pool->data_room())
            throw LocatedError(Location{env.node_name},
                               "frame size " + std::to_string(s) + " exceeds the pool's data room " +
                                   std::to_string(env.pool->data_room()) + " (raise pool.data_room)");
    // One frame per (distinct size, flow): imix keeps 3 per flow, not one per pattern slot.
    frames_.resize(sizes_.size() * flows_);
    for (size_t k = 0; k < sizes_.size(); ++k) {
        for (uint32_t f = 0; f < flows_; ++f) {
            const bool tcp = proto_ == "tcp" || (proto_ == "mix" && (f & 1) != 0);
            const uint32_t off = static_cast<uint32_t>(bytes_.size());
            bytes_.resize(bytes_.size() + sizes_[k]);
            build_frame(bytes_.data() + off, sizes_[k], f, tcp);
            frames_[k * flows_ + f] = Frame{off, sizes_[k]};
        }
    }
    if (duration_ > 0) end_tsc_ = 0;  // armed on the first produce(): timing starts there
    const double hz = double(rte_get_tsc_hz());
    packets_per_cycle_ = pps_ > 0 ? pps_ / hz : 0.0;
    bytes_per_cycle_ = mbps_ > 0 ? mbps_ * 1e6 / 8 / hz : 0.0;
    pace_start_tsc_ = 0;
}

uint64_t SynthSource::due_now(uint64_t max) {
    if (packets_per_cycle_ == 0 && bytes_per_cycle_ == 0) return max;
    const uint64_t now = rte_rdtsc();
    if (pace_start_tsc_ == 0) pace_start_tsc_ = now;
    const double elapsed = double(now - pace_start_tsc_);
    if (packets_per_cycle_ > 0) {
        // Packet k (from 0) is due at k / pps: floor(elapsed x pps) + 1 are due by now. Compared
        // as a double first: at a pace beyond any the host reaches (1e24 pps) the product
        // outgrows uint64_t, whose conversion would then be undefined (it stalled the stream).
        const double due = elapsed * packets_per_cycle_ + 1;
        if (due >= double(emitted_ + max)) return max;
        const auto whole = static_cast<uint64_t>(due);
        return whole > emitted_ ? whole - emitted_ : 0;
    }
    // mbps: a packet is due once the bytes before it fit in the time elapsed.
    const double budget = elapsed * bytes_per_cycle_;
    uint64_t n = 0, bytes = emitted_bytes_;
    while (n < max && double(bytes) <= budget) bytes += frame_for(emitted_ + n++).length;
    return n;
}

const SynthSource::Frame& SynthSource::frame_for(uint64_t seq) const {
    const size_t k = pattern_.size() == 1 ? pattern_[0] : pattern_[seq % pattern_.size()];
    return frames_[k * flows_ + seq % flows_];
}

SourceStatus SynthSource::produce(Burst& b) {
    if (duration_ > 0) {
        const uint64_t now = rte_rdtsc();
        if (end_tsc_ == 0) end_tsc_ = now + static_cast<uint64_t>(duration_ * double(rte_get_tsc_hz()));
        else if (now >= end_tsc_) return SourceStatus::Done;
    }
    uint64_t n = kBurstMax;
    if (count_ != 0) {
        if (emitted_ >= count_) return SourceStatus::Done;
        n = std::min<uint64_t>(n, count_ - emitted_);
    }
    n = due_now(n);
    if (n == 0) return SourceStatus::Idle;  // the next packet is not due yet
    rte_mbuf* m[kBurstMax];
    if (!alloc_packets(env_.pool->get(), m, static_cast<unsigned>(n)))
        return SourceStatus::Idle;  // pool momentarily empty: packets are in flight downstream
    for (uint64_t i = 0; i < n; ++i) {
        const Frame& f = frame_for(emitted_ + i);
        rte_memcpy(rte_pktmbuf_mtod(m[i], uint8_t*), bytes_.data() + f.offset, f.length);
        m[i]->data_len = f.length;
        m[i]->pkt_len = f.length;
        m[i]->port = env_.port;
        wire_length(m[i], wire_offset_) = f.length;
        b.d[i] = PacketDesc{m[i], 0, f.length, env_.port, 0};
        emitted_bytes_ += f.length;
    }
    b.n = static_cast<uint16_t>(n);
    emitted_ += n;
    return SourceStatus::Produced;
}

TILEPIPE_STAGE(SynthSource, "synth", "source: generated Ethernet/IPv4 UDP or TCP traffic (no capture needed)",
               param<std::string>("size", "64", "frame length in bytes without FCS (60-9000), or imix (64/594/1514 in 7:4:1)"),
               param<uint32_t>("flows", 1024, "distinct 5-tuples, emitted round-robin").between(1, kMaxFlows),
               param<std::string>("proto", "udp", "L4 protocol of the flows", {"udp", "tcp", "mix"}),
               param<uint64_t>("count", 10000000, "packets to emit; 0 = no limit (then set duration)"),
               param<double>("duration", 0.0, "seconds to emit for; 0 = no limit (the first limit reached ends the stream)")
                   .at_least(0),
               param<double>("pps", 0, "pace at this many packets per second (0 = top speed)").at_least(0),
               param<double>("mbps", 0, "pace at this many megabits of frame bytes per second (0 = top speed)")
                   .at_least(0));

}  // namespace tp
