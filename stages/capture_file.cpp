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
#include <optional>
#include <stdexcept>
#include <unistd.h>
#include <vector>

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
    return PcapHandle(p);
}

// ---- link types -----------------------------------------------------------------------------
//
// `parse` reads Ethernet only, so every other supported link layer is rewritten at load time:
// its header (if any) is replaced by a synthetic 14-byte Ethernet header whose EtherType says
// what follows. Destination MAC is zero; the source MAC is the capturing interface's address
// when the cooked header carries a 6-byte one, zero otherwise.

constexpr uint32_t kEtherHeader = 14;
constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherIpv6 = 0x86dd;
constexpr uint16_t kEtherMaxLength = 1500;  // EtherType values below 0x0600 are 802.3 lengths

enum class LinkKind { Ethernet, Sll, Sll2, RawIp, Ipv4Only, Ipv6Only, Null, Loop };

struct LinkLayer {
    LinkKind kind = LinkKind::Ethernet;
    uint32_t header = 0;  // bytes of link header the synthetic Ethernet header replaces

    // Frame length once normalised; a record shorter than its link header becomes a bare
    // Ethernet header (EtherType 0).
    uint32_t normalised_length(uint32_t caplen) const {
        if (kind == LinkKind::Ethernet) return caplen;
        return kEtherHeader + (caplen > header ? caplen - header : 0);
    }
};

// DLT_RAW is 12 on most systems and 14 on OpenBSD; a file's LINKTYPE_RAW (101) is mapped to
// the local DLT_RAW by libpcap, and 12 or 14 may appear as written by the capturing system.
bool is_raw_ip(int dlt) { return dlt == DLT_RAW || dlt == 12 || dlt == 14 || dlt == 101; }

// The link layer of a DLT value, or nullopt when it is not supported.
std::optional<LinkLayer> link_layer_of(int dlt) {
    switch (dlt) {
        case DLT_EN10MB: return LinkLayer{LinkKind::Ethernet, 0};
        case DLT_LINUX_SLL: return LinkLayer{LinkKind::Sll, 16};
        case DLT_LINUX_SLL2: return LinkLayer{LinkKind::Sll2, 20};
        case DLT_IPV4: return LinkLayer{LinkKind::Ipv4Only, 0};
        case DLT_IPV6: return LinkLayer{LinkKind::Ipv6Only, 0};
        case DLT_NULL: return LinkLayer{LinkKind::Null, 4};
        case DLT_LOOP: return LinkLayer{LinkKind::Loop, 4};
        default: break;
    }
    if (is_raw_ip(dlt)) return LinkLayer{LinkKind::RawIp, 0};
    return std::nullopt;
}

constexpr const char* kSupportedLinkTypes = "EN10MB, LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6, NULL, LOOP";

LinkLayer checked_link_layer(pcap_t* p, const std::string& path) {
    const int dlt = pcap_datalink(p);
    if (const auto l = link_layer_of(dlt)) return *l;
    const char* dlt_name = pcap_datalink_val_to_name(dlt);
    throw LocatedError(Location{path}, std::string("link type ") +
                                           (dlt_name != nullptr ? dlt_name : "UNKNOWN") + " (" +
                                           std::to_string(dlt) + ") is not supported (supported: " +
                                           kSupportedLinkTypes + ")");
}

inline uint16_t be16(const u_char* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t le32(const u_char* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint32_t be32(const u_char* p) { return uint32_t(be16(p)) << 16 | be16(p + 2); }

uint16_t ether_type_of_ip_version(const u_char* ip, uint32_t len) {
    if (len == 0) return 0;
    switch (ip[0] >> 4) {
        case 4: return kEtherIpv4;
        case 6: return kEtherIpv6;
        default: return 0;
    }
}

// BSD address families as loopback headers carry them: AF_INET is 2 everywhere, AF_INET6
// differs by system (Linux 10, NetBSD/OpenBSD 24, FreeBSD 28, Darwin 30).
uint16_t ether_type_of_family(uint32_t family, const u_char* ip, uint32_t len) {
    switch (family) {
        case 2: return kEtherIpv4;
        case 10:
        case 24:
        case 28:
        case 30: return kEtherIpv6;
        default: return ether_type_of_ip_version(ip, len);
    }
}

// Linux cooked headers use EtherTypes, except values below 0x0600 that name a non-Ethernet
// framing (802.2 LLC, Novell 802.3, CAN, ...): those frames get an 802.3 length instead.
uint16_t ether_type_of_cooked(uint16_t protocol, uint32_t payload) {
    if (protocol >= 0x0600) return protocol;
    return static_cast<uint16_t>(std::min<uint32_t>(payload, kEtherMaxLength));
}

// Writes the normalised frame of a non-Ethernet record into `out` (resized).
void normalise(const LinkLayer& link, const u_char* data, uint32_t caplen, std::vector<u_char>& out) {
    const uint32_t payload = caplen > link.header ? caplen - link.header : 0;
    const u_char* rest = data + (caplen > link.header ? link.header : caplen);
    out.assign(kEtherHeader + payload, 0);
    uint16_t ether_type = 0;
    const bool whole_header = caplen >= link.header;
    switch (link.kind) {
        case LinkKind::Ethernet: break;
        case LinkKind::Sll:
            // packet type, ARPHRD type, address length, address (8), protocol
            if (whole_header) {
                if (be16(data + 4) == 6) std::memcpy(out.data() + 6, data + 6, 6);
                ether_type = ether_type_of_cooked(be16(data + 14), payload);
            }
            break;
        case LinkKind::Sll2:
            // protocol, reserved, interface index, ARPHRD type, packet type, address length,
            // address (8)
            if (whole_header) {
                if (data[11] == 6) std::memcpy(out.data() + 6, data + 12, 6);
                ether_type = ether_type_of_cooked(be16(data), payload);
            }
            break;
        case LinkKind::RawIp: ether_type = ether_type_of_ip_version(rest, payload); break;
        case LinkKind::Ipv4Only: ether_type = kEtherIpv4; break;
        case LinkKind::Ipv6Only: ether_type = kEtherIpv6; break;
        case LinkKind::Null:
            // The capturing host's byte order: a value with high bits set was the other one.
            if (whole_header) {
                const uint32_t family = le32(data);
                ether_type = ether_type_of_family((family & 0xffff0000u) != 0 ? be32(data) : family,
                                                  rest, payload);
            }
            break;
        case LinkKind::Loop:
            if (whole_header) ether_type = ether_type_of_family(be32(data), rest, payload);
            break;
    }
    out[12] = static_cast<u_char>(ether_type >> 8);
    out[13] = static_cast<u_char>(ether_type);
    if (payload > 0) std::memcpy(out.data() + kEtherHeader, rest, payload);
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
    const LinkLayer link = checked_link_layer(p.get(), path);
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
        const uint32_t len = link.normalised_length(h->caplen);
        ++s.records;
        s.bytes += len;
        s.max_length = std::max(s.max_length, len);
        for (size_t k = 0; k < kSegmentRooms.size(); ++k)
            s.segments[k] += (len + kSegmentRooms[k] - 1) / kSegmentRooms[k];
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
    spec.ops = "";   // nor does LIFO order matter: the default handler
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

void CaptureFile::check_header(const std::string& path, const Location& named_at) {
    check_readable(path, named_at);
    const PcapHandle p = open_capture(path);
    checked_link_layer(p.get(), path);
}

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
    const LinkLayer link = checked_link_layer(p.get(), path_);
    std::vector<u_char> normalised;  // the record rewritten to Ethernet, when it was not
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    int64_t first_ns = -1;
    int64_t latest_ns = -1;  // high-water mark: a step backwards replays as a zero gap
    for (uint64_t i = 0; i < count; ++i) {
        const bool read = pcap_next_ex(p.get(), &h, &data) == 1 && h->caplen != 0;
        const uint32_t length = read ? link.normalised_length(h->caplen) : 0;
        if (!read || next_seg + (length + segment_room_ - 1) / segment_room_ > segs.size()) {
            rte_pktmbuf_free_bulk(segs.data() + next_seg, static_cast<unsigned>(segs.size() - next_seg));
            release();
            throw LocatedError(Location{path_}, record_prefix(i + 1) + "the file changed while loading");
        }
        const u_char* bytes = data;
        if (link.kind != LinkKind::Ethernet) {
            normalise(link, data, h->caplen, normalised);
            bytes = normalised.data();
        }
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

        const int64_t ts = timestamp_ns(*h);
        if (ts >= 0) {
            if (first_ns < 0) first_ns = ts;
            latest_ns = std::max(latest_ns, ts);
        }
        const uint64_t offset = first_ns < 0 ? 0 : uint64_t(latest_ns - first_ns);
        records_.push_back(CaptureRecord{head, rte_pktmbuf_mtod(head, const uint8_t*), length, nb, offset});
    }
}

void CaptureFile::release() {
    for (const CaptureRecord& r : records_) rte_pktmbuf_free(const_cast<rte_mbuf*>(r.frame));
    records_.clear();
}

uint32_t CaptureFile::pool_capacity() const { return pool_ ? pool_->capacity() : 0; }
uint32_t CaptureFile::pool_available() const { return pool_ ? pool_->available() : 0; }

}  // namespace tp
