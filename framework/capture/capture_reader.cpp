#include "framework/capture/capture_reader.hpp"

#include <pcap/pcap.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "framework/capture/pcapng_reader.hpp"

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

std::string link_type_name(int linktype) {
    const char* name = pcap_datalink_val_to_name(linktype == 101 ? DLT_RAW : linktype);  // LINKTYPE_RAW's DLT
    return name != nullptr ? name : "UNKNOWN";
}

std::string unsupported(int linktype) {
    return "link type " + link_type_name(linktype) + " (" + std::to_string(linktype) +
           ") is not supported (supported: " + supported_link_types() + ")";
}

}  // namespace

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

CaptureReader::CaptureReader(const std::string& path, bool strict) : path_(path), strict_(strict) {
    if (PcapngReader::is_pcapng(path)) {
        pcapng_ = std::make_unique<PcapngReader>(path);
    } else {
        pcap_ = open_capture(path, buffer_);
        const int dlt = pcap_datalink(pcap_);
        const auto link = link_layer_of(dlt);
        if (!link) {
            pcap_close(pcap_);
            throw LocatedError(Location{path}, unsupported(dlt));
        }
        pcap_link_ = *link;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) file_size_ = uint64_t(st.st_size);
}

CaptureReader::~CaptureReader() {
    if (pcap_ != nullptr) pcap_close(pcap_);
}

CaptureReader::Next CaptureReader::corrupt(const std::string& why) {
    error_ = record_prefix(index_ + 1) + why;
    if (strict_) throw LocatedError(Location{path_}, error_);
    return Next::Corrupt;
}

CaptureReader::Next CaptureReader::record(const LinkLayer& link, const uint8_t* data, uint32_t caplen, uint32_t wire) {
    ++index_;
    frame_ = to_ethernet(link, data, caplen, wire, normalised_);
    return frame_.skip == SkipReason::None ? Next::Record : Next::Skipped;
}

CaptureReader::Next CaptureReader::next() {
    if (!error_.empty()) return Next::Corrupt;  // nothing after a damaged record is read
    return pcapng_ ? next_pcapng() : next_pcap();
}

CaptureReader::Next CaptureReader::next_pcap() {
    const u_char* data = nullptr;
    const int rc = pcap_next_ex(pcap_, &header_, &data);
    if (rc == PCAP_ERROR_BREAK) return Next::End;  // end of file
    if (rc != 1) {
        const std::string why = pcap_geterr(pcap_);
        if (!is_truncation(why)) return corrupt(why);
        truncation_ = record_prefix(index_ + 1) + why;
        return Next::Truncated;
    }
    return record(pcap_link_, data, header_->caplen, header_->len);
}

CaptureReader::Next CaptureReader::next_pcapng() {
    switch (pcapng_->next()) {
        case PcapngReader::Next::End: return Next::End;
        case PcapngReader::Next::Truncated:
            truncation_ = record_prefix(index_ + 1) + pcapng_->problem();
            return Next::Truncated;
        case PcapngReader::Next::Corrupt: return corrupt(pcapng_->problem());
        case PcapngReader::Next::Packet: break;
    }
    const PcapngReader::Interface& i = pcapng_->interface();
    const auto link = link_layer_of(i.linktype);
    if (!link)
        throw LocatedError(Location{path_}, record_prefix(index_ + 1) + "interface " +
                                                std::to_string(pcapng_->interface_id()) + ": " + unsupported(i.linktype));
    return record(*link, pcapng_->data(), pcapng_->caplen(), pcapng_->wire_length());
}

int64_t CaptureReader::timestamp_ns() const {
    if (pcapng_) return pcapng_->timestamp_ns();
    const pcap_pkthdr& h = *header_;
    // With nanosecond precision requested, libpcap hands nanoseconds in tv_usec.
    if (h.ts.tv_sec < 0 || h.ts.tv_usec < 0 || h.ts.tv_usec >= 1000000000) return -1;
    if (h.ts.tv_sec > INT64_MAX / 1000000000 - 1) return -1;
    return int64_t(h.ts.tv_sec) * 1000000000 + h.ts.tv_usec;
}

uint64_t CaptureReader::interface_drops() const { return pcapng_ ? pcapng_->interface_drops() : 0; }

uint64_t CaptureReader::position() const {
    if (pcapng_) return pcapng_->position();
    const long at = std::ftell(pcap_file(pcap_));
    return at < 0 ? 0 : uint64_t(at);
}

}  // namespace tp
