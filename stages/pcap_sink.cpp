#include "stages/pcap_sink.hpp"

#include <fcntl.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <stdexcept>

#include "descriptors/wire_length.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "descriptors/capture_time.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/stage/registry.hpp"
#include "framework/output/output_path.hpp"

namespace tp {

namespace {
// libpcap's MAXIMUM_SNAPLEN: readers refuse Ethernet records longer than this.
constexpr uint64_t kSnaplenMax = 262144;
// A burst of full-size Ethernet frames fits in one write.
constexpr size_t kBufferBytes = 64 * 1024;

constexpr uint32_t kMagicNanoseconds = 0xa1b23c4d;
constexpr uint32_t kLinkEthernet = 1;  // DLT_EN10MB

// The pcap file and record headers, in the host's byte order as the format allows.
struct FileHeader {
    uint32_t magic;
    uint16_t version_major, version_minor;
    int32_t thiszone;
    uint32_t sigfigs, snaplen, linktype;
};
struct RecordHeader {
    uint32_t ts_sec, ts_nsec, caplen, len;
};
static_assert(sizeof(FileHeader) == 24 && sizeof(RecordHeader) == 16);
}  // namespace

void PcapSink::check_params(const ParamValues& params) {
    if (params.get_string("file").empty()) params.fail("file", "'file' is empty: name the capture to write");
    // A folder that depends on the port (cap%p/out.pcap) exists only per port: open checks it.
    const std::string folder = std::filesystem::path(params.get_string("file")).parent_path().string();
    if (folder.find("%p") == std::string::npos) check_output_path(params, "file");
}

PcapSink::PcapSink(const ParamValues& params)
    : Stage(kKind), params_(params), snaplen_(static_cast<uint32_t>(params.get_uint("snaplen"))) {
    write_error_ = declare_drop("write_error");
    split_ = params.get_string("file").find("%p") != std::string::npos;
}

PcapSink::~PcapSink() {
    if (fd_ >= 0) ::close(fd_);
}

void PcapSink::open(StageEnv& env) {
    if (split_) return open_split(env);
    const std::string& path = params_.get_string("file");
    fd_ = ::open(output_name(env.outputs, path).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) params_.fail("file", "cannot write capture '" + path + "': " + std::strerror(errno));
    buf_.resize(std::max<size_t>(kBufferBytes, sizeof(FileHeader) + sizeof(RecordHeader) + snaplen_));
    // The header goes out with the first records (or at close): a file that refuses it
    // refuses packets, which the report then counts.
    const FileHeader h{kMagicNanoseconds, 2, 4, 0, 0, snaplen_, kLinkEthernet};
    std::memcpy(buf_.data(), &h, sizeof h);
    header_ = sizeof h;
    file_bytes_ = 0;
    failed_ = false;
    error_.clear();
}

size_t PcapSink::write_out(size_t bytes) {
    size_t at = 0;
    while (at < bytes) {
        const ssize_t w = ::write(fd_, buf_.data() + at, bytes - at);
        if (w > 0) {
            at += static_cast<size_t>(w);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            failed_ = true;
            error_ = w < 0 ? std::strerror(errno) : "the file takes no more bytes";
            break;
        }
    }
    return at;
}

void PcapSink::after_failed_write() {
    // A record cut short would make readers stop with an error: keep whole records only. A
    // device (/dev/full) cannot be cut, and has nothing to read back.
    if (ftruncate(fd_, static_cast<off_t>(file_bytes_)) != 0) errno = 0;
    request_stop();  // nothing more can be written: end the run as Ctrl-C does
}

void PcapSink::process(Burst& b) {
    if (split_) return process_split(b);
    if (failed_ || fd_ < 0) {
        for (const PacketDesc& d : b) drop(d, write_error_);
        b.n = 0;
        return;
    }
    if (wire_offset_ < 0) {
        wire_offset_ = wire_length_offset();
        capture_time_ = capture_time_field();
    }
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    RecordHeader h{};

    rte_mbuf* written[kBurstMax];
    uint16_t n_written = 0;
    uint16_t from = 0;          // first packet whose record is in buf_
    size_t used = header_;      // bytes in buf_
    size_t end[kBurstMax];      // where each buffered record ends in buf_
    // Writes what is buffered; the packets whose records reached the file are delivered.
    const auto write_buffered = [&](uint16_t upto) {
        const size_t reached = write_out(used);
        size_t whole = reached >= header_ ? header_ : 0;  // bytes of whole records (and header)
        for (uint16_t i = from; i < upto && end[i] <= reached; ++i) {
            written[n_written++] = b.d[i].mbuf;
            whole = end[i];
        }
        file_bytes_ += whole;
        if (failed_) after_failed_write();
        header_ = 0;
        used = 0;
        from = upto;
    };
    for (uint16_t i = 0; i < b.n && !failed_; ++i) {
        rte_mbuf* m = b.d[i].mbuf;
        // The original length goes back as the capture recorded it: a replayed capture written
        // out again keeps its `len` fields, a short snapshot's included.
        // The packet's capture time when its source stamped one that a pcap record's 32-bit
        // seconds hold (before 2106), else the time of writing.
        if (uint64_t ns; capture_ns(m, capture_time_, ns) && ns / 1000000000 <= UINT32_MAX) {
            h.ts_sec = static_cast<uint32_t>(ns / 1000000000);
            h.ts_nsec = static_cast<uint32_t>(ns % 1000000000);
        } else {
            h.ts_sec = static_cast<uint32_t>(now.tv_sec);
            h.ts_nsec = static_cast<uint32_t>(now.tv_nsec);
        }
        h.len = wire_length(m, wire_offset_);
        h.caplen = std::min(rte_pktmbuf_pkt_len(m), snaplen_);
        if (used + sizeof h + h.caplen > buf_.size()) write_buffered(i);
        if (failed_) break;
        std::memcpy(buf_.data() + used, &h, sizeof h);
        uint8_t* at = buf_.data() + used + sizeof h;
        // Copies segment by segment into the buffer; a one-segment frame comes back as a pointer.
        const void* bytes = rte_pktmbuf_read(m, 0, h.caplen, at);
        if (bytes != at) std::memcpy(at, bytes, h.caplen);
        used += sizeof h + h.caplen;
        end[i] = used;
    }
    if (!failed_ && used > header_) write_buffered(b.n);
    free_packets(written, n_written);
    // Packets are written in order: the ones after the last whole record did not reach the file.
    for (uint16_t i = n_written; i < b.n; ++i) drop(b.d[i], write_error_);
    b.n = 0;
}

void PcapSink::close() {
    if (split_) return close_split();
    if (fd_ < 0) return;
    if (!failed_ && header_ != 0) write_out(header_);  // no packet came: the file is a header
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && !failed_) {
        failed_ = true;
        error_ = std::strerror(errno);
    }
    if (failed_)
        throw std::runtime_error("cannot write capture '" + params_.get_string("file") + "': " + error_ + " (" +
                                 std::to_string(stats().reason[write_error_].get()) +
                                 " packets dropped as write_error)");
}

TILEPIPE_STAGE(PcapSink, "pcap_out",
               "write every packet to a pcap file (Ethernet, ns timestamps: the packet's capture time when "
               "its pcap source replays capture time, else the time of writing)",
               param<std::string>("file", required,
                                  "pcap file to write (created or truncated); %p in it: one capture per "
                                  "output port, %p replaced by the port number"),
               param<uint64_t>("snaplen", 262144, "bytes kept per packet").between(1, kSnaplenMax));

}  // namespace tp
