#include "stages/pcap_source.hpp"

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_memcpy.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/capture_file.hpp"

namespace tp {

namespace {

// Most app mbufs one burst may take at once, unless a single frame needs more.
constexpr size_t kBurstSegmentsMax = 4096;

// Copies `len` bytes between two chains whose segment boundaries need not line up.
void copy_chain(const rte_mbuf* src, rte_mbuf* dst, uint32_t len) {
    uint32_t src_off = 0;
    uint32_t dst_off = 0;
    while (len > 0) {
        const uint32_t n = std::min<uint32_t>(src->data_len - src_off, dst->data_len - dst_off);
        rte_memcpy(rte_pktmbuf_mtod_offset(dst, uint8_t*, dst_off),
                   rte_pktmbuf_mtod_offset(src, const uint8_t*, src_off), n);
        src_off += n;
        dst_off += n;
        len -= n;
        if (src_off == src->data_len) src = src->next, src_off = 0;
        if (dst_off == dst->data_len) dst = dst->next, dst_off = 0;
    }
}

// Where the user wrote a parameter, for ordering: unknown lines (the command line) come last.
std::pair<int, int> written_at(const Location& l) {
    return {l.line > 0 ? l.line : INT32_MAX, l.column};
}

}  // namespace

namespace {

struct RateParam {
    const char* name;
    PcapSource::Pace pace;
};

// The pacing parameters set (0 means off rather than "not given", so `--set pps=0` can switch
// off a config's pace), in the order the user wrote them.
std::vector<RateParam> pacing_of(const ParamValues& params) {
    std::vector<RateParam> pacing;
    for (const RateParam r : {RateParam{"pps", PcapSource::Pace::PacketsPerSecond},
                              RateParam{"mbps", PcapSource::Pace::BitsPerSecond},
                              RateParam{"speed", PcapSource::Pace::CaptureTime}})
        if (params.get_double(r.name) > 0) pacing.push_back(r);
    std::stable_sort(pacing.begin(), pacing.end(), [&](const RateParam& a, const RateParam& b) {
        return written_at(params.where(a.name)) < written_at(params.where(b.name));
    });
    return pacing;
}

// At most one pace; the error points at whichever the user wrote second.
std::vector<RateParam> checked_pacing(const ParamValues& params) {
    const std::vector<RateParam> pacing = pacing_of(params);
    if (pacing.size() > 1)
        params.fail(pacing[1].name, std::string("'") + pacing[1].name + "' paces the replay but '" +
                                        pacing[0].name +
                                        "' already does: set at most one of pps, mbps, speed");
    return pacing;
}

}  // namespace

void PcapSource::check_params(const ParamValues& params) {
    checked_pacing(params);
    CaptureFile::check_header(params.get_string("file"), params.where("file"));
}

PcapSource::PcapSource(const ParamValues& params)
    : Stage(kKind), params_(params), loop_(params.get_uint("loop")) {
    truncated_event_ = declare_event("truncated_file");
    // The capture itself is read (and checked) by open().
    const std::vector<RateParam> pacing = checked_pacing(params);
    if (!pacing.empty()) {
        pace_ = pacing[0].pace;
        rate_ = params.get_double(pacing[0].name);
    }
}

uint64_t PcapSource::memory_hint(const ParamValues& params) {
    try {
        return CaptureFile::memory_needed(params.get_string("file"), params.where("file"));
    } catch (const std::exception&) {
        return 0;
    }
}

PcapSource::~PcapSource() = default;

void PcapSource::open(StageEnv& env) {
    if (env.pool == nullptr) throw std::logic_error("pcap source opened without a packet pool");
    const std::string& path = params_.get_string("file");

    const auto t0 = std::chrono::steady_clock::now();
    capture_ = std::make_unique<CaptureFile>(path, params_.where("file"), env.socket);
    const auto load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    const auto& records = capture_->records();
    template_packets_ = records.size();
    template_bytes_ = capture_->bytes();
    truncated_ = capture_->truncated();
    if (truncated_) {
        spdlog::warn("{}: {}: {}; replaying what came before the cut ({} packets)", env.node_name,
                     path, capture_->truncation(), template_packets_);
        count_event(truncated_event_);
    } else if (template_packets_ == 0) {
        spdlog::warn("{}: {}: the capture holds no packets; nothing to replay", env.node_name, path);
    }
    spdlog::debug("{}: loaded {} packets, {} bytes from {} in {:.1f} ms", env.node_name,
                  template_packets_, template_bytes_, path, load_ms);

    app_pool_ = env.pool->get();
    app_room_ = static_cast<uint16_t>(rte_pktmbuf_data_room_size(app_pool_) - RTE_PKTMBUF_HEADROOM);
    if (app_room_ == 0) throw std::logic_error("the app's packet pool has no data room");
    port_ = env.port;

    // A frame needing more app mbufs than the pool holds would wait for ever: refuse it now.
    app_segments_.resize(records.size());
    uint32_t most = 1;
    for (size_t i = 0; i < records.size(); ++i) {
        const uint32_t segs = (records[i].length + app_room_ - 1) / app_room_;
        if (segs > RTE_MBUF_MAX_NB_SEGS || segs > env.pool->capacity())
            throw LocatedError(Location{path},
                               "record " + std::to_string(i + 1) + ": a frame of " +
                                   std::to_string(records[i].length) + " bytes needs " +
                                   std::to_string(segs) + " mbufs of " + std::to_string(app_room_) +
                                   " bytes, more than the app's packet pool can chain or holds (" +
                                   std::to_string(env.pool->capacity()) + ")");
        app_segments_[i] = static_cast<uint16_t>(segs);
        most = std::max(most, segs);
    }
    scratch_.resize(std::max<size_t>(most, std::min<size_t>(size_t(kBurstMax) * most, kBurstSegmentsMax)));

    const double hz = double(rte_get_tsc_hz());
    switch (pace_) {
        case Pace::TopSpeed: cycles_per_unit_ = 0; break;
        case Pace::PacketsPerSecond: cycles_per_unit_ = hz / rate_; break;
        case Pace::BitsPerSecond: cycles_per_unit_ = hz * 8.0 / (rate_ * 1e6); break;
        case Pace::CaptureTime: cycles_per_unit_ = hz / (rate_ * 1e9); break;
    }
    start_tsc_ = 0;
    cursor_ = Cursor{};
    replaying_ = template_packets_ > 0;
}

// Due times count from the first produce(), in the unit the pace is given in.
bool PcapSource::due(const Cursor& c, double elapsed_cycles) const {
    double units = 0;
    switch (pace_) {
        case Pace::TopSpeed: return true;
        case Pace::PacketsPerSecond: units = double(c.packets); break;
        case Pace::BitsPerSecond: units = double(c.bytes); break;
        case Pace::CaptureTime:
            units = double(c.loops_done) * double(capture_->duration_ns()) +
                    double(capture_->records()[c.index].offset_ns);
            break;
    }
    return units * cycles_per_unit_ <= elapsed_cycles;
}

void PcapSource::advance(Cursor& c, uint32_t length) const {
    ++c.packets;
    c.bytes += length;
    if (++c.index == template_packets_) {
        c.index = 0;
        ++c.loops_done;
    }
}

void PcapSource::fill(PacketDesc& d, uint32_t template_index, rte_mbuf** segs) const {
    const CaptureRecord& r = capture_->records()[template_index];
    const uint16_t nb = app_segments_[template_index];
    rte_mbuf* head = segs[0];
    if (nb == 1 && r.segments == 1) {
        rte_memcpy(rte_pktmbuf_mtod(head, uint8_t*), r.data, r.length);
        head->data_len = static_cast<uint16_t>(r.length);
    } else {
        uint32_t left = r.length;
        for (uint16_t j = 0; j < nb; ++j) {
            segs[j]->data_len = static_cast<uint16_t>(std::min<uint32_t>(app_room_, left));
            left -= segs[j]->data_len;
            segs[j]->next = j + 1 < nb ? segs[j + 1] : nullptr;
        }
        copy_chain(r.frame, head, r.length);
    }
    head->nb_segs = nb;
    head->pkt_len = r.length;
    head->port = port_;
    // One app segment is a simple mbuf (see PacketDesc): sinks may free it without reading it.
    d = PacketDesc{head, 0, nb == 1 ? saturate_length(r.length) : PacketDesc::kLengthSaturated, port_, 0};
}

SourceStatus PcapSource::produce(Burst& b) {
    if (!replaying_ || finished(cursor_)) return SourceStatus::Done;

    double elapsed = 0;
    if (pace_ != Pace::TopSpeed) {
        const uint64_t now = rte_rdtsc();
        if (start_tsc_ == 0) start_tsc_ = now;
        elapsed = double(now - start_tsc_);
    }

    // Plan which packets go now: due, within the burst, within the scratch array.
    uint32_t segs_through[kBurstMax];  // app mbufs the first i+1 planned packets need
    uint16_t n = 0;
    uint32_t segs = 0;
    const auto& records = capture_->records();
    for (Cursor c = cursor_; n < kBurstMax && !finished(c); advance(c, records[c.index].length)) {
        const uint16_t need = app_segments_[c.index];
        if (segs + need > scratch_.size() || !due(c, elapsed)) break;
        segs += need;
        segs_through[n++] = segs;
    }
    if (n == 0) return SourceStatus::Idle;  // the next packet is not due yet

    // Packets in flight hold the app pool; take fewer, or wait, but never lose one.
    while (!alloc_packets(app_pool_, scratch_.data(), segs_through[n - 1])) {
        if (n == 1) return SourceStatus::Idle;
        n /= 2;
    }

    // Templates of a large capture do not fit in cache: fetch the bytes of a few packets
    // ahead (the record says where they are, so no template header is read) while copying
    // the current one.
    constexpr uint32_t kAhead = 4;
    auto ahead = [&](uint32_t k) {
        const uint32_t i = cursor_.index + k;
        return records[i < template_packets_ ? i : i % template_packets_].data;
    };
    for (uint32_t k = 0; k < kAhead; ++k) rte_prefetch0(ahead(k));
    rte_mbuf** segs_of_packet = scratch_.data();
    for (uint16_t i = 0; i < n; ++i) {
        rte_prefetch0(ahead(kAhead));
        fill(b.d[i], cursor_.index, segs_of_packet);
        segs_of_packet += app_segments_[cursor_.index];
        advance(cursor_, records[cursor_.index].length);
    }
    b.n = n;
    return SourceStatus::Produced;
}

void PcapSource::close() {
    replaying_ = false;
    if (capture_) capture_->release();
}

uint32_t PcapSource::template_pool_capacity() const {
    return capture_ ? capture_->pool_capacity() : 0;
}
uint32_t PcapSource::template_pool_available() const {
    return capture_ ? capture_->pool_available() : 0;
}

TILEPIPE_STAGE(PcapSource, "pcap", "replay a pcap/pcapng capture (Ethernet, Linux cooked, raw IP, loopback), at top speed or paced",
               param<std::string>("file", required, "capture to replay (pcap or pcapng; other link types get an Ethernet header)").input_file(),
               param<uint64_t>("loop", 1, "times the capture is replayed; 0 = until the app stops").between(0, UINT32_MAX),
               param<double>("pps", 0, "pace at this many packets per second (0 = off)").at_least(0),
               param<double>("mbps", 0, "pace at this many megabits of frame bytes per second (0 = off)")
                   .at_least(0),
               param<double>("speed", 0,
                             "pace by the capture's own timestamps times this; 1 = as recorded (0 = off)")
                   .at_least(0));

}  // namespace tp
