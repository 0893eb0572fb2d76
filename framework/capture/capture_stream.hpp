// CaptureStream: a capture replayed straight from its file, for captures too big to preload.
//
// A reader thread reads the file (CaptureReader), copies each record into template mbufs of a
// small private pool and queues the record in a CaptureRing; the replaying source takes
// records from the front, copies them into app mbufs as it does for a preloaded capture, and
// gives the templates back. The pool bounds the memory: the reader waits while every template
// is queued (it sleeps until the replay has given a quarter of the pool back, and the replay wakes it). With `loops` the
// reader re-reads the file pass after pass; replay offsets keep growing across passes as a
// preloaded replay's do (pass k starts k capture durations in).
//
// The reader starts in the constructor and fills the buffers before the run's clock starts
// (prime()). A damaged record ends a pass as the end of the file does (the records before it
// are replayed, each pass), unless `strict`. It ends at the end of the last pass, at an error (the source rethrows it once
// the records before it have been replayed: `drained()`), at stop() or at a process stop
// request (Ctrl-C). Accounting: after stop() every template is back in its pool.
//
// Thread-safety: the consumer functions (prime, ready, front, consume, drained, stop) belong to
// one thread, the replaying tile; the reader thread is internal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "descriptors/mbuf_pool.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_reader.hpp"
#include "framework/capture/capture_ring.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp {

struct CaptureStreamSpec {
    std::string path;
    uint64_t loops = 1;           // passes over the file; 0 = until stop()
    uint64_t buffer_bytes = 0;    // EAL memory the template pool may take (see pool_spec)
    uint16_t app_room = 2048;     // data bytes of one app mbuf
    uint32_t app_segments_max = 0;  // most app mbufs one frame may take (a longer one is an error)
    int socket = -1;
    bool strict = false;          // a damaged record is an error rather than the end of a pass
    // Where the consumer sleeps when no record is ready (StageEnv::bell): rung after every
    // record queued and at the end. nullptr: the consumer polls.
    Doorbell* consumer_bell = nullptr;
};

class CaptureStream {
public:
    // The template pool a spec gets: 2048-byte segments, as many as `buffer_bytes` pays for,
    // between kMinSegments (room for the longest frame pcap allows) and kMaxSegments.
    static MbufPoolSpec pool_spec(const CaptureStreamSpec& spec);
    static constexpr uint16_t kSegmentRoom = 2048;
    static constexpr uint32_t kMinSegments = 511;
    static constexpr uint32_t kMaxSegments = 16383;

    explicit CaptureStream(const CaptureStreamSpec& spec);
    ~CaptureStream();
    CaptureStream(const CaptureStream&) = delete;
    CaptureStream& operator=(const CaptureStream&) = delete;

    // Waits until the buffers are full, the file is read, or a stop is requested.
    void prime();

    // Records at the front ready to replay (at most `want`), and the k-th of them.
    uint32_t ready(uint32_t want) { return ring_.readable(want); }
    const CaptureRecord& front(uint32_t k) const { return ring_.front(k); }
    // The first `n` ready records were replayed: their templates go back to the pool.
    void consume(uint32_t n);

    // True when the reader has ended and every record it read was consumed; rethrows the
    // reader's error (a LocatedError naming the record) at that point, once.
    bool drained();
    // Why a pass stopped early ("record 3: truncated dump file; ..."); valid once drained().
    const std::string& truncation() const { return truncation_; }
    // Why a pass stopped at a damaged record ("record 3: ..."); valid once first_pass_read().
    const std::string& error() const { return damaged_; }
    // True once the first pass has been read: error(), skipped() and interface_drops() are
    // then final.
    bool first_pass_read() const { return first_pass_read_.load(std::memory_order_acquire); }
    // What the first pass skipped, and the interface drops it found; valid once drained().
    const SkippedRecords& skipped() const { return skipped_; }
    uint64_t interface_drops() const { return interface_drops_; }

    // Ends the reader and gives back every template still queued. Idempotent.
    void stop();

    uint32_t pool_capacity() const { return pool_.capacity(); }
    uint32_t pool_available() const { return pool_.available(); }

    // Times the reader waited for templates to come back, and those of its waits that ended
    // by the safety-net timeout rather than a consume()'s wake-up. relaxed: statistics,
    // written by the reader only.
    uint64_t reader_waits() const { return reader_waits_.load(std::memory_order_relaxed); }
    uint64_t reader_wait_timeouts() const { return reader_wait_timeouts_.load(std::memory_order_relaxed); }

private:
    void read_passes();
    bool read_pass(uint64_t base_ns, uint64_t& duration_ns, uint64_t& records, bool first_pass);
    bool wait_for_room(uint32_t need);
    void announce(uint32_t& unannounced);

    CaptureStreamSpec spec_;
    MbufPool pool_;
    CaptureRing<CaptureRecord> ring_;
    // Written by the reader before done_ is set, read by the consumer after it sees done_.
    std::exception_ptr error_;
    std::string truncation_;
    std::string damaged_;
    SkippedRecords skipped_;
    uint64_t interface_drops_ = 0;
    // release by the reader after its last push (and error_/truncation_), acquire by the
    // consumer: everything the reader did is visible once done_ reads true.
    std::atomic<bool> done_{false};
    // release by the reader once the first pass's skips, error and drops are written (they
    // are not written again), acquire by the consumer before reading them.
    std::atomic<bool> first_pass_read_{false};
    std::atomic<bool> primed_{false};  // release/acquire: the buffers were filled once
    std::atomic<bool> stop_{false};    // relaxed: a request, it publishes no data
    // The reader sleeps on wake_ until the pool holds wake_at_ free templates (0: not waiting).
    // seq_cst store (reader) and load (consumer), each on the other side of a seq_cst fence
    // from its look at the pool: the Dekker pattern, so one of them sees the other (see
    // wait_for_room and consume).
    std::mutex wake_mutex_;
    std::condition_variable wake_;
    std::atomic<uint32_t> wake_at_{0};
    std::atomic<uint64_t> reader_waits_{0};
    std::atomic<uint64_t> reader_wait_timeouts_{0};
    bool rethrown_ = false;
    std::thread reader_;
};

}  // namespace tp
