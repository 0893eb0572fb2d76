// PcapSource (`pcap`): replays an Ethernet pcap or pcapng capture, at top speed or paced.
//
// Synopsis
//   source: { stage: pcap, file: caps/web.pcap, loop: 10, mbps: 1000 }
//
// Parameters
//   file        capture to replay (pcap or pcapng; see capture_file.hpp)      required
//   loop        times the capture is replayed, 0 = until the app stops       default 1
//   pps         pace at this many packets per second                         } at most one;
//   mbps        pace at this many megabits of frame bytes per second         } none = top
//   speed       pace by the capture's own timestamps times this (1 = recorded) } speed
//   preload     true, false or auto: hold the whole capture in memory, or    default auto
//               stream it from the file (preload_budget.hpp)
//   preload_mb  the memory a preloaded capture may take, MiB (0 = half of    default 0
//               what the process can take); also bounds a stream's buffers
//   strict      refuse a capture with a damaged record instead of replaying  default false
//               the records before it (`tilepipe run --strict` sets it)
//   timestamps  capture: each packet carries its record's own timestamp     default auto
//               (descriptors/capture_time.hpp), which pcap_out writes and
//               flow_table's first_ns/last_ns report; replay: it carries
//               none, and they use the time they saw it; auto: capture for
//               a replay of one loop at top speed, replay when paced or looped
//
// Capture time: with `timestamps: capture` a packet carries the timestamp its record has in
// the file (each loop repeats them; a record whose timestamp cannot be real carries none), so
// the output of an app that passes a capture through is stamped as tcpdump shows the input.
//
// Preloaded, open() loads the whole file into template mbufs of a private pool before timing
// starts (CaptureFile), so replay never reads the disk. Streamed, open() starts a reader
// thread that keeps a small pool of templates filled ahead of the replay (CaptureStream) and
// waits until it is full; a record the reader finds damaged fails the node after the records
// before it were replayed. Either way produce() copies templates into fresh mbufs from the
// app's pool, so downstream stages own and may edit what they receive; frames longer than one
// app mbuf leave as chains. When the app pool is momentarily empty, or a stream's reader is
// behind, produce() returns Idle and retries later: a replay never drops. Pacing compares the
// TSC with each packet's due time and returns Idle when the next one is not due yet; it never
// sleeps. Under `speed`, timestamps that go backwards or cannot be real replay as zero gaps.
// A stop request (Ctrl-C) while loading ends the load at once; the source then replays nothing.
//
// Events (each with one warning, at open, or for a stream when the reader reaches the point):
//   truncated_file                 the capture ended inside a record; the records before the
//                                  cut are replayed
//   capture.errors                 a damaged record stopped the reading (1); the records before
//                                  it are replayed
//   capture.skipped_records        records with no Ethernet form, not replayed; and by reason,
//   capture.skipped.<reason>       empty_record, wlan_management, ppp_control, ... (link_layer.hpp)
//   capture.interface_drops        packets the capturing interfaces dropped (pcapng statistics)
// Skips, errors and drops count the file once, whatever `loop` is: replayed + skipped is the
// file's record count on a single pass.
//
// Each packet's wire length (descriptors/wire_length.hpp) is the record's original length.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/capture_time.hpp"
#include "framework/metrics/emit_plan.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"
#include "framework/capture/capture_file.hpp"

struct rte_mbuf;
struct rte_mempool;

namespace tp {

class CaptureFile;
class CaptureStream;

class PcapSource final : public Stage, public PlansEmission {
public:
    static constexpr StageKind kKind = StageKind::Source;

    explicit PcapSource(const ParamValues& params);
    ~PcapSource() override;

    // EAL memory the loaded capture will take; 0 when the file cannot be read (open() then
    // reports why, with the record index).
    static uint64_t memory_hint(const ParamValues& params);
    static void check_params(const ParamValues& params);
    // The link types read and what each becomes, and what is skipped (`tilepipe stages pcap`).
    static std::string stage_notes();

    void open(StageEnv& env) override;
    SourceStatus produce(Burst& b) override;
    void close() override;

    // True when open() chose to stream the capture rather than preload it.
    bool streaming() const { return stream_ != nullptr; }
    // What open() preloaded (stays valid after close()); 0 for a stream.
    uint64_t template_packets() const { return template_packets_; }
    uint64_t template_bytes() const { return template_bytes_; }
    bool truncated() const { return truncated_; }
    // For the progress line: loop x records of a preloaded capture, set by open() (a stream
    // does not count its records ahead: no loop count, no time left).
    EmitPlan emit_plan() const override {
        const uint64_t all = loop_ * template_packets_;  // 0: for ever
        return EmitPlan{limit_ != 0 && (all == 0 || limit_ < all) ? limit_ : all, template_packets_, loop_};
    }
    // The private template pool (preloaded or streamed), for accounting checks: full again
    // once close() ran.
    uint32_t template_pool_capacity() const;
    uint32_t template_pool_available() const;

    enum class Pace { TopSpeed, PacketsPerSecond, BitsPerSecond, CaptureTime };

private:
    // Where records come from: the preloaded templates or the stream's ring (pcap_source.cpp).
    struct PreloadedFeed;
    struct StreamedFeed;

    // Position in the replay: which template is next, and how much has gone out.
    struct Cursor {
        uint32_t index = 0;       // preloaded: next template
        uint64_t loops_done = 0;  // preloaded: passes completed
        uint64_t packets = 0;
        uint64_t bytes = 0;
    };

    void open_preloaded(const std::string& path, const StageEnv& env);
    void open_streamed(const std::string& path, uint64_t buffer_bytes, const StageEnv& env);
    template <typename Feed>
    SourceStatus replay(Feed& feed, Burst& b);
    bool due(uint64_t packets, uint64_t bytes, uint64_t offset_ns, double elapsed_cycles) const;
    void report_capture(const SkippedRecords& skipped, const std::string& error, uint64_t interface_drops,
                        const std::string& replayed);
    void fill(PacketDesc& d, const CaptureRecord& r, uint16_t app_segments, rte_mbuf** segs) const;

    ParamValues params_;
    uint64_t loop_ = 1;
    uint64_t limit_ = 0;  // packets in all (`limit`); 0: as many as the loops give
    Pace pace_ = Pace::TopSpeed;
    double rate_ = 0;  // pps, mbps or speed, by pace_

    std::unique_ptr<CaptureFile> capture_;
    std::unique_ptr<CaptureStream> stream_;
    std::vector<uint16_t> app_segments_;  // app mbufs each template needs
    std::vector<rte_mbuf*> scratch_;      // fresh mbufs of one burst, sized at open
    rte_mempool* app_pool_ = nullptr;
    uint16_t app_room_ = 0;
    uint8_t port_ = 0;

    double cycles_per_unit_ = 0;  // per packet, per frame byte or per capture nanosecond
    uint64_t start_tsc_ = 0;      // first produce(): the replay clock starts there
    Cursor cursor_;
    bool replaying_ = false;  // between open() and close(), with something to replay

    uint64_t template_packets_ = 0;
    uint64_t template_bytes_ = 0;
    bool truncated_ = false;
    uint16_t truncated_event_;
    uint16_t skipped_event_;
    uint16_t errors_event_;
    uint16_t drops_event_;
    uint16_t skip_reason_event_[kSkipReasons];
    int wire_offset_ = -1;
    bool capture_times_ = false;     // stamp each packet with its record's timestamp
    CaptureTimeField capture_time_;  // where (valid when capture_times_)
    bool truncation_seen_ = false;  // a stream's cut was reported
    bool stream_reported_ = false;  // a stream's skips, error and drops were reported
    std::string node_name_;
};

}  // namespace tp
