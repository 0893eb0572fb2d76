#include "stages/capture_file.hpp"

#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

namespace tp {

namespace {

// Template segment sizes the loader chooses from: the one that holds the capture in the least
// memory wins, so a capture of small frames does not pay a jumbo-sized room per frame.
constexpr std::array<uint16_t, 9> kSegmentRooms{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
// What a segment costs besides its data room: the mbuf header, the headroom every pktmbuf
// pool reserves, and the mempool's per-object header and padding.
constexpr uint64_t kSegmentOverhead = sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM + 64;

std::atomic<uint32_t> g_pool_serial{0};

struct PcapCloser {
    void operator()(pcap_t* p) const { pcap_close(p); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// libpcap's words for a file that ends inside a record (pcap and pcapng readers).
bool is_truncation(const std::string& libpcap_error) {
    return starts_with(libpcap_error, "truncated dump file") ||
           starts_with(libpcap_error, "truncated pcapng dump file");
}

std::string record_prefix(uint64_t index) { return "record " + std::to_string(index) + ": "; }

// Checks what libpcap would report less clearly: a missing or unreadable path is the user's
// parameter at fault, an empty file is the file's.
void check_readable(const std::string& path, const Location& named_at) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw LocatedError(named_at, "cannot open capture '" + path + "': " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        throw LocatedError(named_at, "cannot open capture '" + path + "': it is a directory");
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0)
        throw LocatedError(named_at, "cannot open capture '" + path + "': " + std::strerror(errno));
    ::close(fd);
    if (S_ISREG(st.st_mode) && st.st_size == 0)
        throw LocatedError(Location{path}, "empty file (0 bytes), not a pcap or pcapng capture");
}

PcapHandle open_capture(const std::string& path) {
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    // libpcap reads standard input for "-"; a file of that name must be named explicitly.
    const std::string name = path == "-" ? "./-" : path;
    pcap_t* p = pcap_open_offline_with_tstamp_precision(name.c_str(), PCAP_TSTAMP_PRECISION_NANO,
                                                        errbuf);
    if (p == nullptr) throw LocatedError(Location{path}, errbuf);
    PcapHandle h(p);
    const int dlt = pcap_datalink(p);
    if (dlt != DLT_EN10MB) {
        const char* dlt_name = pcap_datalink_val_to_name(dlt);
        throw LocatedError(Location{path}, std::string("link type ") +
                                               (dlt_name != nullptr ? dlt_name : "UNKNOWN") + " (" +
                                               std::to_string(dlt) +
                                               ") is not supported (supported: EN10MB)");
    }
    return h;
}

// Nanoseconds since the epoch, or -1 when the record's timestamp cannot be a real time.
int64_t timestamp_ns(const pcap_pkthdr& h) {
    // With nanosecond precision requested, libpcap hands nanoseconds in tv_usec.
    if (h.ts.tv_sec < 0 || h.ts.tv_usec < 0 || h.ts.tv_usec >= 1000000000) return -1;
    if (h.ts.tv_sec > INT64_MAX / 1000000000 - 1) return -1;
    return int64_t(h.ts.tv_sec) * 1000000000 + h.ts.tv_usec;
}

// What a first pass over the file learns: enough to size the template pool exactly.
struct Survey {
    uint64_t records = 0;
    uint64_t bytes = 0;
    uint32_t max_length = 0;
    std::array<uint64_t, kSegmentRooms.size()> segments{};  // per candidate room
    std::string truncation;

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

Survey survey_capture(const std::string& path) {
    PcapHandle p = open_capture(path);
    Survey s;
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    for (;;) {
        const int rc = pcap_next_ex(p.get(), &h, &data);
        if (rc == PCAP_ERROR_BREAK) break;  // end of file
        const uint64_t index = s.records + 1;
        if (rc != 1) {
            const std::string why = pcap_geterr(p.get());
            if (!is_truncation(why)) throw LocatedError(Location{path}, record_prefix(index) + why);
            s.truncation = record_prefix(index) + why;
            break;
        }
        if (h->caplen == 0)
            throw LocatedError(Location{path}, record_prefix(index) +
                                                   "zero capture length (an empty record holds "
                                                   "no frame to replay)");
        ++s.records;
        s.bytes += h->caplen;
        s.max_length = std::max(s.max_length, h->caplen);
        for (size_t k = 0; k < kSegmentRooms.size(); ++k)
            s.segments[k] += (h->caplen + kSegmentRooms[k] - 1) / kSegmentRooms[k];
    }
    if (s.segments_with(s.cheapest_room()) > UINT32_MAX - 1)
        throw LocatedError(Location{path}, "too many records to hold in memory");
    return s;
}

MbufPoolSpec template_pool_spec(const Survey& s, int socket) {
    MbufPoolSpec spec;
    spec.name = "pcap_tpl_" + std::to_string(g_pool_serial.fetch_add(1));
    spec.data_room = s.cheapest_room();
    spec.mbufs = static_cast<uint32_t>(s.segments_with(spec.data_room));
    spec.cache = 0;  // filled once, drained once: a per-lcore cache would only hide mbufs
    spec.socket = socket;
    return spec;
}

}  // namespace

CaptureFile::CaptureFile(const std::string& path, const Location& named_at, int socket)
    : path_(path) {
    check_readable(path, named_at);
    const Survey s = survey_capture(path);
    const MbufPoolSpec spec = template_pool_spec(s, socket);
    segment_room_ = spec.data_room;
    bytes_ = s.bytes;
    max_length_ = s.max_length;
    truncation_ = s.truncation;
    if (s.records == 0) return;
    try {
        pool_ = std::make_unique<MbufPool>(spec);
    } catch (const std::runtime_error& e) {
        throw LocatedError(Location{path_}, std::string("cannot hold the capture in memory: ") + e.what());
    }
    copy_records(s.records);
}

CaptureFile::~CaptureFile() { release(); }

uint64_t CaptureFile::memory_needed(const std::string& path, const Location& named_at) {
    check_readable(path, named_at);
    const Survey s = survey_capture(path);
    return s.records == 0 ? 0 : MbufPool::footprint(template_pool_spec(s, -1));
}

void CaptureFile::copy_records(uint64_t count) {
    std::vector<rte_mbuf*> segs(pool_->capacity());
    if (rte_pktmbuf_alloc_bulk(pool_->get(), segs.data(), static_cast<unsigned>(segs.size())) != 0)
        throw LocatedError(Location{path_}, "cannot take the template mbufs from their own pool");
    size_t next_seg = 0;
    records_.reserve(count);

    PcapHandle p = open_capture(path_);
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    int64_t first_ns = -1;
    int64_t latest_ns = -1;  // high-water mark: a step backwards replays as a zero gap
    for (uint64_t i = 0; i < count; ++i) {
        if (pcap_next_ex(p.get(), &h, &data) != 1 || h->caplen == 0 ||
            next_seg + (h->caplen + segment_room_ - 1) / segment_room_ > segs.size()) {
            rte_pktmbuf_free_bulk(segs.data() + next_seg, static_cast<unsigned>(segs.size() - next_seg));
            release();
            throw LocatedError(Location{path_}, record_prefix(i + 1) + "the file changed while loading");
        }
        rte_mbuf* head = segs[next_seg];
        rte_mbuf* prev = nullptr;
        uint32_t done = 0;
        uint16_t nb = 0;
        while (done < h->caplen) {
            rte_mbuf* seg = segs[next_seg++];
            const uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(segment_room_, h->caplen - done));
            std::memcpy(rte_pktmbuf_mtod(seg, uint8_t*), data + done, n);
            seg->data_len = n;
            if (prev != nullptr) prev->next = seg;
            prev = seg;
            done += n;
            ++nb;
        }
        head->nb_segs = nb;
        head->pkt_len = h->caplen;

        const int64_t ts = timestamp_ns(*h);
        if (ts >= 0) {
            if (first_ns < 0) first_ns = ts;
            latest_ns = std::max(latest_ns, ts);
        }
        const uint64_t offset = first_ns < 0 ? 0 : uint64_t(latest_ns - first_ns);
        records_.push_back(CaptureRecord{head, h->caplen, offset});
    }
}

void CaptureFile::release() {
    for (const CaptureRecord& r : records_) rte_pktmbuf_free(const_cast<rte_mbuf*>(r.frame));
    records_.clear();
}

uint32_t CaptureFile::pool_capacity() const { return pool_ ? pool_->capacity() : 0; }
uint32_t CaptureFile::pool_available() const { return pool_ ? pool_->available() : 0; }

}  // namespace tp
