#include "framework/capture/capture_file.hpp"

#include <rte_mbuf.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include "framework/runtime/stop_request.hpp"
#include "framework/capture/capture_reader.hpp"
#include "framework/capture/load_progress.hpp"

namespace tp {

namespace {

// Template segment sizes the loader chooses from: the one that holds the capture in the least
// memory wins, so a capture of small frames does not pay a jumbo-sized room per frame.
constexpr std::array<uint16_t, 9> kSegmentRooms{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
// What a segment costs besides its data room: the mbuf header, the headroom every pktmbuf
// pool reserves, and the mempool's per-object header and padding.
constexpr uint64_t kSegmentOverhead = sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM + 64;

std::atomic<uint32_t> g_template_pool_serial{0};

// What a first pass over the file learns: enough to size the template pool exactly.
struct Survey {
    uint64_t records = 0;
    uint64_t bytes = 0;
    uint32_t max_length = 0;
    std::array<uint64_t, kSegmentRooms.size()> segments{};  // per candidate room
    std::string truncation;
    std::string error;  // the damaged record loading stops at
    SkippedRecords skipped;
    uint64_t interface_drops = 0;

    // The candidate room that holds every record in the least memory; ties go to the larger
    // room (fewer chains).
    uint16_t cheapest_room() const {
        const auto memory_with_room = [&](size_t k) {
            return segments[k] * (kSegmentRooms[k] + kSegmentOverhead);
        };
        size_t best = 0;
        for (size_t k = 1; k < kSegmentRooms.size(); ++k)
            if (memory_with_room(k) <= memory_with_room(best)) best = k;
        return kSegmentRooms[best];
    }

    uint64_t segments_with(uint16_t room) const {
        return segments[std::find(kSegmentRooms.begin(), kSegmentRooms.end(), room) - kSegmentRooms.begin()];
    }
};

// Records between two looks at the clock and the stop request while reading a capture.
constexpr uint64_t kRecordsPerCheck = 4096;

// A survey pass, or nullopt when a stop was requested during it.
std::optional<Survey> read_survey(const std::string& path) {
    CaptureReader reader(path);
    LoadProgress progress("surveying " + path, reader.file_size());
    Survey s;
    for (;;) {
        const CaptureReader::Next next = reader.next();
        if (next == CaptureReader::Next::End) break;
        if (next == CaptureReader::Next::Truncated) {
            s.truncation = reader.truncation();
            break;
        }
        if (next == CaptureReader::Next::Corrupt) {
            s.error = reader.error();
            break;
        }
        if (next == CaptureReader::Next::Skipped) {
            s.skipped.add(reader.skip_reason(), reader.index());
            continue;
        }
        const uint32_t len = reader.length();
        ++s.records;
        s.bytes += len;
        s.max_length = std::max(s.max_length, len);
        for (size_t k = 0; k < kSegmentRooms.size(); ++k)
            s.segments[k] += (len + kSegmentRooms[k] - 1) / kSegmentRooms[k];
        if (s.records % kRecordsPerCheck == 0) {
            if (stop_requested()) return std::nullopt;
            progress.update(reader.position());
        }
    }
    s.interface_drops = reader.interface_drops();
    if (s.segments_with(s.cheapest_room()) > UINT32_MAX - 1)
        throw LocatedError(Location{path}, "too many records to hold in memory");
    progress.finish();
    return s;
}

// Surveys of files not changed since (by inode, size and modification time): sizing EAL
// memory and loading both need one, and a large capture should be read once for it, not twice.
struct SurveyKey {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    bool operator==(const SurveyKey&) const = default;
};

std::optional<SurveyKey> survey_key(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return SurveyKey{st.st_dev, st.st_ino, st.st_size, int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::optional<Survey> survey_capture(const std::string& path) {
    static std::mutex mutex;
    static std::map<std::string, std::pair<SurveyKey, Survey>> done;
    const std::optional<SurveyKey> key = survey_key(path);
    if (key) {
        const std::lock_guard<std::mutex> lock(mutex);
        const auto it = done.find(path);
        if (it != done.end() && it->second.first == *key) return it->second.second;
    }
    std::optional<Survey> s = read_survey(path);
    if (s && key) {
        const std::lock_guard<std::mutex> lock(mutex);
        done[path] = {*key, *s};
    }
    return s;
}

MbufPoolSpec template_pool_spec(const Survey& s, int socket) {
    MbufPoolSpec spec;
    spec.name = "pcap_tpl_" + std::to_string(g_template_pool_serial.fetch_add(1));
    spec.data_room = s.cheapest_room();
    spec.mbufs = static_cast<uint32_t>(s.segments_with(spec.data_room));
    spec.cache = 0;  // filled once, drained once: a per-lcore cache would only hide mbufs
    spec.ops = "";   // nor does LIFO order matter: the default handler
    spec.socket = socket;
    return spec;
}

}  // namespace

CaptureFile::CaptureFile(const std::string& path, const Location& named_at, int socket, bool strict)
    : path_(path) {
    CaptureReader::check_readable(path, named_at);
    const std::optional<Survey> s = survey_capture(path);
    if (!s) {
        interrupted_ = true;
        return;
    }
    const MbufPoolSpec spec = template_pool_spec(*s, socket);
    segment_room_ = spec.data_room;
    bytes_ = s->bytes;
    max_length_ = s->max_length;
    truncation_ = s->truncation;
    error_ = s->error;
    skipped_ = s->skipped;
    interface_drops_ = s->interface_drops;
    if (strict && !error_.empty()) throw LocatedError(Location{path_}, error_);
    if (s->records == 0) return;
    try {
        pool_ = std::make_unique<MbufPool>(spec);
    } catch (const std::runtime_error& e) {
        throw LocatedError(Location{path_}, std::string("cannot hold the capture in memory: ") + e.what());
    }
    copy_records(s->records);
}

CaptureFile::~CaptureFile() { release(); }

void CaptureFile::check_header(const std::string& path, const Location& named_at) {
    CaptureReader::check_readable(path, named_at);
    CaptureReader reader(path);
    // A pcapng's link types are its interfaces', described in blocks after the header: the
    // first record's (the usual one interface) is checked too, as a classic file's header is.
    reader.next();
}

void CaptureFile::check_records(const std::string& path, const Location& named_at) {
    CaptureReader::check_readable(path, named_at);
    CaptureReader reader(path, true);
    for (CaptureReader::Next n = reader.next(); n == CaptureReader::Next::Record || n == CaptureReader::Next::Skipped;)
        n = reader.next();
}

uint64_t CaptureFile::memory_needed(const std::string& path, const Location& named_at) {
    CaptureReader::check_readable(path, named_at);
    const std::optional<Survey> s = survey_capture(path);
    return !s || s->records == 0 ? 0 : MbufPool::footprint(template_pool_spec(*s, -1));
}

void CaptureFile::copy_records(uint64_t count) {
    std::vector<rte_mbuf*> segs(pool_->capacity());
    if (rte_pktmbuf_alloc_bulk(pool_->get(), segs.data(), static_cast<unsigned>(segs.size())) != 0)
        throw LocatedError(Location{path_}, "cannot take the template mbufs from their own pool");
    size_t next_seg = 0;
    records_.reserve(count);
    // Gives back what was not used yet, and what was (release()), when loading stops early.
    const auto abandon = [&] {
        rte_pktmbuf_free_bulk(segs.data() + next_seg, static_cast<unsigned>(segs.size() - next_seg));
        release();
    };

    CaptureReader reader(path_);
    LoadProgress progress("loading " + path_, reader.file_size());
    ReplayOffsets offsets;
    for (uint64_t i = 0; i < count; ++i) {
        if (i % kRecordsPerCheck == kRecordsPerCheck - 1) {
            if (stop_requested()) {
                abandon();
                interrupted_ = true;
                return;
            }
            progress.update(reader.position());
        }
        CaptureReader::Next next = reader.next();
        while (next == CaptureReader::Next::Skipped) next = reader.next();  // the survey counted them
        const bool read = next == CaptureReader::Next::Record;
        const uint32_t length = read ? reader.length() : 0;
        if (!read || next_seg + (length + segment_room_ - 1) / segment_room_ > segs.size()) {
            abandon();
            throw LocatedError(Location{path_}, "record " + std::to_string(reader.index() + 1) + ": the file changed while loading");
        }
        const uint8_t* bytes = reader.frame();
        rte_mbuf* head = segs[next_seg];
        rte_mbuf* prev = nullptr;
        uint32_t done = 0;
        uint16_t nb = 0;
        while (done < length) {
            rte_mbuf* seg = segs[next_seg++];
            const uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(segment_room_, length - done));
            std::memcpy(rte_pktmbuf_mtod(seg, uint8_t*), bytes + done, n);
            seg->data_len = n;
            if (prev != nullptr) prev->next = seg;
            prev = seg;
            done += n;
            ++nb;
        }
        head->nb_segs = nb;
        head->pkt_len = length;
        const uint64_t offset = offsets.offset_of(reader.timestamp_ns());
        records_.push_back(
            CaptureRecord{head, rte_pktmbuf_mtod(head, const uint8_t*), length, reader.wire_length(), nb, offset,
                          reader.timestamp_ns()});
    }
    progress.finish();
}

void CaptureFile::release() {
    // In bulk: a large capture holds millions of templates, and close() runs inside the run.
    rte_mbuf* frames[256];
    for (size_t i = 0; i < records_.size();) {
        unsigned n = 0;
        for (; n < 256 && i < records_.size(); ++n, ++i) frames[n] = const_cast<rte_mbuf*>(records_[i].frame);
        rte_pktmbuf_free_bulk(frames, n);
    }
    records_.clear();
}

uint32_t CaptureFile::pool_capacity() const { return pool_ ? pool_->capacity() : 0; }
uint32_t CaptureFile::pool_available() const { return pool_ ? pool_->available() : 0; }

}  // namespace tp
