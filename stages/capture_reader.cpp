#include "stages/capture_reader.hpp"

#include <pcap/pcap.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <unistd.h>

namespace tp {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// libpcap's words for a file that ends inside a record (pcap and pcapng readers).
bool is_truncation(const std::string& libpcap_error) {
    return starts_with(libpcap_error, "truncated dump file") ||
           starts_with(libpcap_error, "truncated pcapng dump file");
}

std::string record_prefix(uint64_t index) { return "record " + std::to_string(index) + ": "; }

// libpcap reads a record's header and its bytes with one fread each: through stdio's default
// 4 KiB buffer, a capture of small frames costs a read() every few dozen records.
constexpr size_t kReadBuffer = 1 << 20;

pcap_t* open_capture(const std::string& path, std::vector<char>& buffer) {
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw LocatedError(Location{path}, std::string("cannot open: ") + std::strerror(errno));
    buffer.resize(kReadBuffer);
    std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
    pcap_t* p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (p == nullptr) {
        std::fclose(f);
        throw LocatedError(Location{path}, errbuf);
    }
    return p;  // pcap_close() closes the file
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
void normalise(const LinkLayer& link, const u_char* data, uint32_t caplen, std::vector<uint8_t>& out) {
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

}  // namespace

struct CaptureReader::Link : LinkLayer {};

void CaptureReader::check_readable(const std::string& path, const Location& named_at) {
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

CaptureReader::CaptureReader(const std::string& path) : path_(path), pcap_(open_capture(path, buffer_)) {
    try {
        link_ = std::make_unique<Link>(Link{checked_link_layer(pcap_, path)});
    } catch (...) {
        pcap_close(pcap_);
        throw;
    }
    struct stat st {};
    if (::fstat(fileno(pcap_file(pcap_)), &st) == 0 && S_ISREG(st.st_mode)) file_size_ = uint64_t(st.st_size);
}

CaptureReader::~CaptureReader() { pcap_close(pcap_); }

CaptureReader::Next CaptureReader::next() {
    const int rc = pcap_next_ex(pcap_, &header_, &data_);
    normalised_ready_ = false;
    if (rc == PCAP_ERROR_BREAK) return Next::End;  // end of file
    const uint64_t index = index_ + 1;
    if (rc != 1) {
        const std::string why = pcap_geterr(pcap_);
        if (!is_truncation(why)) throw LocatedError(Location{path_}, record_prefix(index) + why);
        truncation_ = record_prefix(index) + why;
        return Next::Truncated;
    }
    if (header_->caplen == 0)
        throw LocatedError(Location{path_}, record_prefix(index) +
                                                "zero capture length (an empty record holds "
                                                "no frame to replay)");
    index_ = index;
    length_ = link_->normalised_length(header_->caplen);
    return Next::Record;
}

const uint8_t* CaptureReader::frame() {
    if (link_->kind == LinkKind::Ethernet) return data_;
    if (!normalised_ready_) {
        normalise(*link_, data_, header_->caplen, normalised_);
        normalised_ready_ = true;
    }
    return normalised_.data();
}

int64_t CaptureReader::timestamp_ns() const {
    const pcap_pkthdr& h = *header_;
    // With nanosecond precision requested, libpcap hands nanoseconds in tv_usec.
    if (h.ts.tv_sec < 0 || h.ts.tv_usec < 0 || h.ts.tv_usec >= 1000000000) return -1;
    if (h.ts.tv_sec > INT64_MAX / 1000000000 - 1) return -1;
    return int64_t(h.ts.tv_sec) * 1000000000 + h.ts.tv_usec;
}

uint64_t CaptureReader::position() const {
    const long at = std::ftell(pcap_file(pcap_));
    return at < 0 ? 0 : uint64_t(at);
}

}  // namespace tp
