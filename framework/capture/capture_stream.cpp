#include "framework/capture/capture_stream.hpp"

#include <pthread.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "framework/runtime/stop_request.hpp"
#include "framework/capture/capture_reader.hpp"

namespace tp {

namespace {

std::atomic<uint32_t> g_stream_serial{0};

// A ring with a slot for every template segment: the pool, not the ring, bounds the reader.
uint32_t ring_capacity_for(uint32_t segments) {
    // (records take at least one template each, so the reader never finds the ring full)
    uint32_t c = 1;
    while (c < segments + 1) c <<= 1;
    return c;
}

// The reader waits for free templates until a quarter of the pool is free again, so one wait
// is paid for by many records: the replaying tile wakes it when it has given that many back
// (consume), with a timed wait as the safety net (counted when it finds the room there). Polling with
// short sleeps instead would wake the reader thousands of times a second, each time taking
// the CPU from a tile on a loaded machine; yielding is worse (a yield can cost a whole slice).
constexpr auto kWaitAtMost = std::chrono::milliseconds(1);
constexpr uint32_t kAnnounceEvery = 16;  // records per ring of the consumer's doorbell (announce)

}  // namespace

MbufPoolSpec CaptureStream::pool_spec(const CaptureStreamSpec& spec) {
    MbufPoolSpec p;
    p.name = "pcap_stream_" + std::to_string(g_stream_serial.fetch_add(1));
    p.data_room = kSegmentRoom;
    p.cache = 0;  // the reader is not an lcore, and a cache would hide templates from the count
    p.ops = "";   // the default handler: lock-free between the reader and the replaying tile
    p.socket = spec.socket;
    const uint64_t per = MbufPool::footprint(MbufPoolSpec{"", 1, 0, kSegmentRoom, -1, ""}) -
                         MbufPool::footprint(MbufPoolSpec{"", 0, 0, kSegmentRoom, -1, ""});
    const uint64_t fixed = MbufPool::footprint(MbufPoolSpec{"", 0, 0, kSegmentRoom, -1, ""});
    const uint64_t affordable = spec.buffer_bytes > fixed ? (spec.buffer_bytes - fixed) / per : 0;
    p.mbufs = static_cast<uint32_t>(std::clamp<uint64_t>(affordable, kMinSegments, kMaxSegments));
    return p;
}

CaptureStream::CaptureStream(const CaptureStreamSpec& spec)
    : spec_(spec), pool_(pool_spec(spec)), ring_(ring_capacity_for(pool_.capacity())) {
    reader_ = std::thread([this] {
        pthread_setname_np(pthread_self(), "tp-pcap-reader");
        read_passes();
    });
}

CaptureStream::~CaptureStream() { stop(); }

void CaptureStream::prime() {
    while (!primed_.load(std::memory_order_acquire) && !stop_requested())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void CaptureStream::consume(uint32_t n) {
    // A one-segment template goes straight back to its pool: it is direct, its refcnt is 1 and
    // its `next` is null, as the reader made it, so the free need not read its header (a line
    // the reader's CPU wrote). Chains take the ordinary free.
    void* simple[64];
    rte_mbuf* chains[64];
    while (n > 0) {
        const uint32_t k = std::min<uint32_t>(n, 64);
        uint32_t ns = 0, nc = 0;
        for (uint32_t i = 0; i < k; ++i) {
            const CaptureRecord& r = ring_.front(i);
            rte_mbuf* m = const_cast<rte_mbuf*>(r.frame);
            if (r.segments == 1) simple[ns++] = m;
            else chains[nc++] = m;
        }
        ring_.consume(k);
        if (ns != 0) {
            tsan_release(pool_.get());  // the reader allocates them again: TSan sees the hand-over
            rte_mempool_put_bulk(pool_.get(), simple, ns);
        }
        if (nc != 0) free_packets(chains, nc);
        n -= k;
    }
    // The reader waits for this many free templates. The fence puts the templates given back
    // above before the look at wake_at_, as the reader puts its wake_at_ before its second
    // look at the pool (wait_for_room): one of the two sees the other, so a reader that this
    // look misses sees these templates and does not sleep. The mutex orders the wake-up.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const uint32_t wake_at = wake_at_.load(std::memory_order_relaxed);  // relaxed: ordered by the fence
    if (wake_at != 0 && pool_.available() >= wake_at) {
        const std::lock_guard<std::mutex> lock(wake_mutex_);
        wake_.notify_one();
    }
}

bool CaptureStream::drained() {
    if (!done_.load(std::memory_order_acquire) || ring_.readable(1) != 0) return false;
    if (error_ && !rethrown_) {
        rethrown_ = true;
        std::rethrow_exception(error_);
    }
    return true;
}

void CaptureStream::stop() {
    stop_.store(true, std::memory_order_relaxed);
    {
        const std::lock_guard<std::mutex> lock(wake_mutex_);
        wake_.notify_one();
    }
    if (reader_.joinable()) reader_.join();
    // The join makes the reader's pushes visible; what was never replayed goes back.
    for (uint32_t n = ring_.readable(ring_.capacity()); n != 0; n = ring_.readable(ring_.capacity())) consume(n);
}

// Waits until a quarter of the pool is free (or `need` templates, if more); false when the
// reader should end instead.
bool CaptureStream::wait_for_room(uint32_t need) {
    primed_.store(true, std::memory_order_release);  // the pool is full: as ready as it gets
    const uint32_t enough = std::max(need, pool_.capacity() / 4);
    std::unique_lock<std::mutex> lock(wake_mutex_);
    for (;;) {
        if (stop_.load(std::memory_order_relaxed) || stop_requested()) return false;
        if (pool_.available() >= enough) return true;
        // Announce, then look again (Dekker with consume(): see there); relaxed stores, ordered
        // by the fence. A consume() that saw the announcement takes the mutex, which this
        // thread holds until wait_for releases it, so its notify cannot come before the wait.
        wake_at_.store(enough, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        bool room = pool_.available() >= enough;
        if (!room) {
            reader_waits_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
            const bool timed_out = wake_.wait_for(lock, kWaitAtMost) == std::cv_status::timeout;
            room = pool_.available() >= enough;
            // The room came and nobody woke the reader: a wake-up lost (or late).
            if (timed_out && room) reader_wait_timeouts_.fetch_add(1, std::memory_order_relaxed);
        }
        wake_at_.store(0, std::memory_order_relaxed);
        if (room) return true;
    }
}

void CaptureStream::read_passes() {
    try {
        uint64_t duration_ns = 0;
        for (uint64_t pass = 0; spec_.loops == 0 || pass < spec_.loops; ++pass) {
            uint64_t records = 0;
            if (!read_pass(pass * duration_ns, duration_ns, records, pass == 0)) break;
            if (records == 0) break;  // nothing to loop over
        }
    } catch (...) {
        error_ = std::current_exception();
    }
    primed_.store(true, std::memory_order_release);
    done_.store(true, std::memory_order_release);
    if (spec_.consumer_bell != nullptr) spec_.consumer_bell->ring();  // drained() may be true now
}

// Rings the consumer's doorbell for the records pushed since the last ring. ring() is a
// seq_cst fence after the pushes' release, then a look at the consumer's parked flag: one per
// kAnnounceEvery records, and before the reader waits for templates or ends a pass, so a
// consumer that parked on an empty ring learns of every record before the reader can stall.
// (A read held up by the disk can leave up to kAnnounceEvery - 1 records unannounced for its
// length, a wait the consumer would have had for the next record anyway.)
void CaptureStream::announce(uint32_t& unannounced) {
    if (unannounced == 0) return;
    unannounced = 0;
    if (spec_.consumer_bell != nullptr) spec_.consumer_bell->ring();
}

// One pass over the file; false when the reader should end (stopped). The first pass sets
// `duration_ns`, the offset of its last record.
bool CaptureStream::read_pass(uint64_t base_ns, uint64_t& duration_ns, uint64_t& records, bool first_pass) {
    CaptureReader reader(spec_.path, spec_.strict);
    ReplayOffsets offsets;
    std::vector<rte_mbuf*> segs;
    uint64_t last_offset = 0;
    uint32_t unannounced = 0;  // records pushed since the consumer's doorbell last rang
    for (;;) {
        if (stop_.load(std::memory_order_relaxed)) {
            announce(unannounced);
            return false;
        }
        const CaptureReader::Next next = reader.next();
        if (next == CaptureReader::Next::Truncated && truncation_.empty()) truncation_ = reader.truncation();
        if (next == CaptureReader::Next::Corrupt && first_pass) damaged_ = reader.error();
        if (next == CaptureReader::Next::Skipped) {
            if (first_pass) skipped_.add(reader.skip_reason(), reader.index());
            continue;
        }
        if (next != CaptureReader::Next::Record) break;
        const uint32_t length = reader.length();
        const uint32_t app_segments = (length + spec_.app_room - 1) / spec_.app_room;
        if (app_segments > spec_.app_segments_max)
            throw LocatedError(Location{spec_.path},
                               "record " + std::to_string(reader.index()) + ": a frame of " + std::to_string(length) +
                                   " bytes needs " + std::to_string(app_segments) + " mbufs of " +
                                   std::to_string(spec_.app_room) +
                                   " bytes, more than the app's packet pool can chain or holds");
        const uint32_t nb = (length + kSegmentRoom - 1) / kSegmentRoom;
        if (nb > pool_.capacity())  // cannot happen below libpcap's largest snapshot length
            throw LocatedError(Location{spec_.path}, "record " + std::to_string(reader.index()) + ": a frame of " +
                                                         std::to_string(length) + " bytes is longer than the stream's buffers");
        if (segs.size() < nb) segs.resize(nb);  // grows to the longest frame once, not per record
        while (!alloc_packets(pool_.get(), segs.data(), nb)) {
            announce(unannounced);  // the consumer frees templates only once it sees records
            if (!wait_for_room(nb)) return false;
        }
        const uint8_t* bytes = reader.frame();
        uint32_t done = 0;
        for (uint32_t i = 0; i < nb; ++i) {
            const uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(kSegmentRoom, length - done));
            std::memcpy(rte_pktmbuf_mtod(segs[i], uint8_t*), bytes + done, n);
            segs[i]->data_len = n;
            segs[i]->next = i + 1 < nb ? segs[i + 1] : nullptr;
            done += n;
        }
        segs[0]->nb_segs = static_cast<uint16_t>(nb);
        segs[0]->pkt_len = length;
        last_offset = offsets.offset_of(reader.timestamp_ns());
        const CaptureRecord r{segs[0], rte_pktmbuf_mtod(segs[0], const uint8_t*), length, reader.wire_length(),
                              static_cast<uint16_t>(nb), base_ns + last_offset, reader.timestamp_ns()};
        // The ring has a slot for every template, so a record that got templates gets a slot.
        if (!ring_.try_push(r)) throw std::logic_error("capture ring full with templates to spare");
        if (++unannounced == kAnnounceEvery) announce(unannounced);
        ++records;
    }
    announce(unannounced);
    if (base_ns == 0 && duration_ns == 0) duration_ns = last_offset;
    if (first_pass) {
        interface_drops_ = reader.interface_drops();
        first_pass_read_.store(true, std::memory_order_release);
    }
    return true;
}

}  // namespace tp
