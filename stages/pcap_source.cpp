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
#include "framework/runtime/stop_request.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_stream.hpp"
#include "framework/capture/preload_budget.hpp"
#include "descriptors/wire_length.hpp"

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

std::string PcapSource::stage_notes() {
    return "  link types read (pcap, and pcapng per interface), each record normalised to Ethernet:\n" +
           link_types_help() +
           "  records with no Ethernet form (no captured bytes, 802.11 management/control/null/encrypted frames,\n"
           "  PPP control protocols) are skipped and counted as capture.skipped.<reason>; a damaged record ends\n"
           "  the capture there (capture.errors) unless strict; each packet keeps its wire length (the record's\n"
           "  original length), which bpf_filter's len, flow_table's wire_bytes and pcap_out's records use\n";
}

PcapSource::PcapSource(const ParamValues& params)
    : Stage(kKind), params_(params), loop_(params.get_uint("loop")), limit_(params.get_uint("limit")) {
    truncated_event_ = declare_event("truncated_file");
    skipped_event_ = declare_event("capture.skipped_records");
    errors_event_ = declare_event("capture.errors");
    drops_event_ = declare_event("capture.interface_drops");
    for (size_t r = 1; r < kSkipReasons; ++r)
        skip_reason_event_[r] = declare_event(std::string("capture.skipped.") + skip_reason_name(SkipReason(r)));
    // The capture itself is read (and checked) by open().
    const std::vector<RateParam> pacing = checked_pacing(params);
    if (!pacing.empty()) {
        pace_ = pacing[0].pace;
        rate_ = params.get_double(pacing[0].name);
    }
}

uint64_t PcapSource::memory_hint(const ParamValues& params) {
    try {
        return plan_replay(params.get_string("preload"), params.get_uint("preload_mb"), params.get_string("file"),
                           params.where("file"))
            .memory;
    } catch (const std::exception&) {
        return 0;
    }
}

PcapSource::~PcapSource() = default;

void PcapSource::open(StageEnv& env) {
    if (env.pool == nullptr) throw std::logic_error("pcap source opened without a packet pool");
    const std::string& path = params_.get_string("file");
    app_pool_ = env.pool->get();
    app_room_ = static_cast<uint16_t>(rte_pktmbuf_data_room_size(app_pool_) - RTE_PKTMBUF_HEADROOM);
    if (app_room_ == 0) throw std::logic_error("the app's packet pool has no data room");
    port_ = env.port;
    wire_offset_ = wire_length_offset();
    const std::string& stamps = params_.get_string("timestamps");
    capture_times_ = stamps == "capture" || (stamps == "auto" && pace_ == Pace::TopSpeed && loop_ == 1);
    if (capture_times_) capture_time_ = capture_time_field();
    node_name_ = env.node_name;
    truncation_seen_ = false;
    stream_reported_ = false;

    const ReplayPlan plan = plan_replay(params_.get_string("preload"), params_.get_uint("preload_mb"), path,
                                        params_.where("file"));
    const auto t0 = std::chrono::steady_clock::now();
    if (plan.preload) open_preloaded(path, env);
    else open_streamed(path, stream_buffer_bytes(plan.budget), env);
    spdlog::debug("{}: {} {} in {:.1f} ms (preload budget {} MiB)", env.node_name,
                  plan.preload ? "loaded" : "primed a stream of", path,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                  plan.budget >> 20);
    if (stop_requested()) {
        spdlog::warn("{}: loading {} stopped by request", env.node_name, path);
        close();
        return;
    }

    const double hz = double(rte_get_tsc_hz());
    switch (pace_) {
        case Pace::TopSpeed: cycles_per_unit_ = 0; break;
        case Pace::PacketsPerSecond: cycles_per_unit_ = hz / rate_; break;
        case Pace::BitsPerSecond: cycles_per_unit_ = hz * 8.0 / (rate_ * 1e6); break;
        case Pace::CaptureTime: cycles_per_unit_ = hz / (rate_ * 1e9); break;
    }
    start_tsc_ = 0;
    cursor_ = Cursor{};
}

void PcapSource::open_preloaded(const std::string& path, const StageEnv& env) {
    capture_ = std::make_unique<CaptureFile>(path, params_.where("file"), env.socket, params_.get_bool("strict"));
    if (capture_->interrupted()) return;
    const auto& records = capture_->records();
    template_packets_ = records.size();
    template_bytes_ = capture_->bytes();
    truncated_ = capture_->truncated();
    report_capture(capture_->skipped(), capture_->error(), capture_->interface_drops(),
                   std::to_string(template_packets_) + " ");
    if (truncated_) {
        spdlog::warn("{}: {}: {}; replaying what came before the cut ({} packets)", env.node_name,
                     path, capture_->truncation(), template_packets_);
        count_event(truncated_event_);
    } else if (template_packets_ == 0 && capture_->error().empty()) {
        spdlog::warn("{}: {}: the capture holds no packets; nothing to replay", env.node_name, path);
    }

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
    replaying_ = template_packets_ > 0;
}

void PcapSource::open_streamed(const std::string& path, uint64_t buffer_bytes, const StageEnv& env) {
    // Records are not known in advance: room for a burst of the longest frame libpcap reads.
    scratch_.resize(kBurstSegmentsMax);
    CaptureStreamSpec spec;
    spec.path = path;
    spec.loops = loop_;
    spec.buffer_bytes = buffer_bytes;
    spec.app_room = app_room_;
    spec.app_segments_max = std::min<uint32_t>({RTE_MBUF_MAX_NB_SEGS, env.pool->capacity(),
                                                static_cast<uint32_t>(scratch_.size())});
    spec.socket = env.socket;
    spec.strict = params_.get_bool("strict");
    spec.consumer_bell = env.bell;  // the reader wakes this tile when records are ready
    CaptureFile::check_header(path, params_.where("file"));  // damaged records fail the node later
    stream_ = std::make_unique<CaptureStream>(spec);
    stream_->prime();
    replaying_ = true;
}

// Due times count from the first produce(), in the unit the pace is given in.
bool PcapSource::due(uint64_t packets, uint64_t bytes, uint64_t offset_ns, double elapsed_cycles) const {
    double units = 0;
    switch (pace_) {
        case Pace::TopSpeed: return true;
        case Pace::PacketsPerSecond: units = double(packets); break;
        case Pace::BitsPerSecond: units = double(bytes); break;
        case Pace::CaptureTime: units = double(offset_ns); break;
    }
    return units * cycles_per_unit_ <= elapsed_cycles;
}

// One warning per kind of record left out, and their counts as events.
void PcapSource::report_capture(const SkippedRecords& skipped, const std::string& error, uint64_t interface_drops,
                                const std::string& replayed) {
    const std::string& node = node_name_;
    const std::string& path = params_.get_string("file");
    for (size_t r = 1; r < kSkipReasons; ++r) {
        const uint64_t n = skipped.count[r];
        if (n == 0) continue;
        spdlog::warn("{}: {}: skipped {} {} (first: record {}); counted as capture.skipped.{}", node, path, n,
                     skip_reason_text(SkipReason(r)), skipped.first[r], skip_reason_name(SkipReason(r)));
        count_event(skip_reason_event_[r], n);
    }
    if (skipped.total() != 0) count_event(skipped_event_, skipped.total());
    if (!error.empty()) {
        spdlog::warn("{}: {}: {}; replaying the {}records before it (strict: true refuses such a file)", node, path,
                     error, replayed);
        count_event(errors_event_);
    }
    if (interface_drops != 0) {
        spdlog::warn("{}: {}: the capturing interfaces dropped {} packets (not in the file)", node, path,
                     interface_drops);
        count_event(drops_event_, interface_drops);
    }
}

void PcapSource::fill(PacketDesc& d, const CaptureRecord& r, uint16_t nb, rte_mbuf** segs) const {
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
    wire_length(head, wire_offset_) = r.wire_length;
    if (capture_times_ && r.time_ns >= 0) set_capture_ns(head, capture_time_, static_cast<uint64_t>(r.time_ns));
    // One app segment is a simple mbuf (see PacketDesc): sinks may free it without reading it.
    d = PacketDesc{head, 0, nb == 1 ? saturate_length(r.length) : PacketDesc::kLengthSaturated, port_, 0};
}

// The preloaded templates, `loop` times over (for ever with loop 0), from the cursor on.
struct PcapSource::PreloadedFeed {
    PcapSource& src;

    uint32_t ready(uint32_t want) const {
        if (src.loop_ == 0) return want;
        const uint64_t left = src.loop_ * src.template_packets_ - src.cursor_.packets;
        return static_cast<uint32_t>(std::min<uint64_t>(want, left));
    }
    uint32_t index(uint32_t k) const {
        const uint32_t i = src.cursor_.index + k;
        return i < src.template_packets_ ? i : static_cast<uint32_t>(i % src.template_packets_);
    }
    const CaptureRecord& front(uint32_t k) const { return src.capture_->records()[index(k)]; }
    uint16_t app_segments(uint32_t k) const { return src.app_segments_[index(k)]; }
    uint64_t offset_ns(uint32_t k) const {
        const uint64_t loops = src.cursor_.loops_done + (src.cursor_.index + k) / src.template_packets_;
        return loops * src.capture_->duration_ns() + front(k).offset_ns;
    }
    // Templates of a large capture do not fit in cache: fetch the bytes of a packet a few
    // ahead (the record says where they are, so no template header is read).
    void prefetch(uint32_t k) const { rte_prefetch0(front(k).data); }
    void consume(uint32_t n) {
        const uint64_t at = uint64_t(src.cursor_.index) + n;
        src.cursor_.loops_done += at / src.template_packets_;
        src.cursor_.index = static_cast<uint32_t>(at % src.template_packets_);
    }
    bool done() const { return true; }  // ready() said 0: every loop went out
};

// The stream's ring: what the reader thread has queued so far.
struct PcapSource::StreamedFeed {
    PcapSource& src;
    CaptureStream& stream;

    uint32_t ready(uint32_t want) const { return stream.ready(want); }
    const CaptureRecord& front(uint32_t k) const { return stream.front(k); }
    uint16_t app_segments(uint32_t k) const {
        return static_cast<uint16_t>((front(k).length + src.app_room_ - 1) / src.app_room_);
    }
    uint64_t offset_ns(uint32_t k) const { return front(k).offset_ns; }
    void prefetch(uint32_t) const {}  // the reader just wrote them: still warm in a cache
    void consume(uint32_t n) { stream.consume(n); }
    bool done() {
        if (!stream.drained()) return false;  // the reader is behind: Idle, not the end

        if (!src.truncation_seen_ && !stream.truncation().empty()) {
            src.truncation_seen_ = src.truncated_ = true;
            spdlog::warn("{}: {}; replayed what came before the cut", src.params_.get_string("file"),
                         stream.truncation());
            src.count_event(src.truncated_event_);
        }
        return true;
    }
};

template <typename Feed>
SourceStatus PcapSource::replay(Feed& feed, Burst& b) {
    // `limit`: the replay ends after that many packets, whatever the loop (tcpreplay's --limit).
    if (limit_ != 0 && cursor_.packets >= limit_) return SourceStatus::Done;
    const uint32_t ready = limit_ == 0 ? feed.ready(kBurstMax)
                                       : feed.ready(static_cast<uint32_t>(std::min<uint64_t>(kBurstMax, limit_ - cursor_.packets)));
    if (ready == 0) return feed.done() ? SourceStatus::Done : SourceStatus::Idle;

    double elapsed = 0;
    if (pace_ != Pace::TopSpeed) {
        const uint64_t now = rte_rdtsc();
        if (start_tsc_ == 0) start_tsc_ = now;
        elapsed = double(now - start_tsc_);
    }

    // Plan which packets go now: due, within the burst, within the scratch array.
    uint32_t segs_through[kBurstMax];  // app mbufs the first i+1 planned packets need
    uint16_t nb_of[kBurstMax];
    uint16_t n = 0;
    uint32_t segs = 0;
    uint64_t bytes = cursor_.bytes;
    for (uint32_t k = 0; k < ready; ++k) {
        const uint16_t need = feed.app_segments(k);
        if (segs + need > scratch_.size() || !due(cursor_.packets + k, bytes, feed.offset_ns(k), elapsed)) break;
        bytes += feed.front(k).length;
        segs += need;
        nb_of[n] = need;
        segs_through[n++] = segs;
    }
    if (n == 0) return SourceStatus::Idle;  // the next packet is not due yet

    // Packets in flight hold the app pool; take fewer, or wait, but never lose one.
    while (!alloc_packets(app_pool_, scratch_.data(), segs_through[n - 1])) {
        if (n == 1) return SourceStatus::Idle;
        n /= 2;
    }

    constexpr uint32_t kAhead = 4;
    for (uint32_t k = 0; k < kAhead && k < n; ++k) feed.prefetch(k);
    rte_mbuf** segs_of_packet = scratch_.data();
    for (uint16_t i = 0; i < n; ++i) {
        if (i + kAhead < n) feed.prefetch(i + kAhead);
        const CaptureRecord& r = feed.front(i);
        fill(b.d[i], r, nb_of[i], segs_of_packet);
        segs_of_packet += nb_of[i];
        ++cursor_.packets;
        cursor_.bytes += r.length;
    }
    feed.consume(n);
    b.n = n;
    return SourceStatus::Produced;
}

SourceStatus PcapSource::produce(Burst& b) {
    if (!replaying_) return SourceStatus::Done;
    if (stream_) {
        if (!stream_reported_ && stream_->first_pass_read()) {
            stream_reported_ = true;
            report_capture(stream_->skipped(), stream_->error(), stream_->interface_drops(), "");
        }
        StreamedFeed feed{*this, *stream_};
        return replay(feed, b);
    }
    PreloadedFeed feed{*this};
    return replay(feed, b);
}

void PcapSource::close() {
    replaying_ = false;
    if (capture_) capture_->release();
    if (stream_) stream_->stop();
}

uint32_t PcapSource::template_pool_capacity() const {
    if (stream_) return stream_->pool_capacity();
    return capture_ ? capture_->pool_capacity() : 0;
}
uint32_t PcapSource::template_pool_available() const {
    if (stream_) return stream_->pool_available();
    return capture_ ? capture_->pool_available() : 0;
}

TILEPIPE_STAGE(PcapSource, "pcap", "replay a pcap/pcapng capture (Ethernet, Linux cooked, raw IP, loopback, PPP, 802.11), preloaded or streamed from the file, at top speed or paced",
               param<std::string>("file", required, "capture to replay (pcap or pcapng; other link types get an Ethernet header)").input_file(),
               param<uint64_t>("loop", 1, "times the capture is replayed; 0 = until the app stops").between(0, UINT32_MAX),
               param<uint64_t>("limit", 0, "end the replay after this many packets, loops included (0 = no limit; "
                                           "`tilepipe run --limit N` sets it)"),
               param<double>("pps", 0, "pace at this many packets per second (0 = off)").at_least(0),
               param<double>("mbps", 0, "pace at this many megabits of frame bytes per second (0 = off)")
                   .at_least(0),
               param<double>("speed", 0,
                             "pace by the capture's own timestamps times this; 1 = as recorded (0 = off)")
                   .at_least(0),
               param<std::string>("preload", "auto",
                                  "hold the whole capture in memory (true) or stream it from the file (false); "
                                  "auto: preload when it fits preload_mb",
                                  {"auto", "true", "false"}),
               param<uint64_t>("preload_mb", 0,
                               "memory a preloaded capture may take, MiB; 0 = half of what the process can "
                               "take; also bounds a stream's buffers"),
               param<bool>("strict", false,
                           "refuse a capture with a damaged record (as tcpdump does) instead of replaying the "
                           "records before it; `tilepipe run --strict` sets it"),
               param<std::string>("timestamps", "auto",
                                  "capture: each packet carries its record's own timestamp (pcap_out writes it, "
                                  "flow_table's first_ns/last_ns report it); replay: none, they use the time they "
                                  "saw the packet; auto: capture for one loop at top speed, else replay",
                                  {"auto", "capture", "replay"}));

}  // namespace tp
