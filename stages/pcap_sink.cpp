#include "stages/pcap_sink.hpp"

#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {
// libpcap's MAXIMUM_SNAPLEN: readers refuse Ethernet records longer than this.
constexpr uint64_t kSnaplenMax = 262144;
}  // namespace

PcapSink::PcapSink(const ParamValues& params)
    : Stage(kKind), params_(params), snaplen_(0) {
    const uint64_t snaplen = params.get_uint("snaplen");
    if (snaplen == 0 || snaplen > kSnaplenMax)
        params.fail("snaplen", "'snaplen' must be between 1 and " + std::to_string(kSnaplenMax) +
                                   ", got " + std::to_string(snaplen));
    snaplen_ = static_cast<uint32_t>(snaplen);
    write_error_ = declare_drop("write_error");
    split_ = params.get_string("file").find("%p") != std::string::npos;
}

PcapSink::~PcapSink() { release_handles(); }

void PcapSink::open(StageEnv& env) {
    if (split_) return open_split(env);
    const std::string& path = params_.get_string("file");
    dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snaplen_),
                                                 PCAP_TSTAMP_PRECISION_NANO);
    if (dead_ == nullptr) throw std::runtime_error("libpcap cannot describe an Ethernet capture");
    // Opened here rather than by pcap_dump_open so the error is ours (and "-" stays a file).
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
        const std::string why = std::strerror(errno);
        release_handles();
        params_.fail("file", "cannot write capture '" + path + "': " + why);
    }
    dumper_ = pcap_dump_fopen(dead_, f);
    if (dumper_ == nullptr) {
        const std::string why = pcap_geterr(dead_);
        std::fclose(f);
        release_handles();
        params_.fail("file", "cannot write capture '" + path + "': " + why);
    }
    linear_.resize(snaplen_);
    failed_ = false;
}

void PcapSink::process(Burst& b) {
    if (split_) return process_split(b);
    if (failed_ || dumper_ == nullptr) {
        for (const PacketDesc& d : b) drop(d, write_error_);
        b.n = 0;
        return;
    }
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    pcap_pkthdr h{};
    h.ts.tv_sec = now.tv_sec;
    h.ts.tv_usec = now.tv_nsec;  // a nanosecond file: libpcap writes this field as is

    rte_mbuf* written[kBurstMax];
    for (uint16_t i = 0; i < b.n; ++i) {
        rte_mbuf* m = b.d[i].mbuf;
        h.len = rte_pktmbuf_pkt_len(m);
        h.caplen = std::min(h.len, snaplen_);
        // Points into the mbuf when the first segment holds the bytes, else copies to linear_.
        const void* bytes = rte_pktmbuf_read(m, 0, h.caplen, linear_.data());
        pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, static_cast<const u_char*>(bytes));
        written[i] = m;
    }
    if (std::ferror(pcap_dump_file(dumper_)) != 0) {
        failed_ = true;
        for (const PacketDesc& d : b) drop(d, write_error_);
    } else {
        free_packets(written, b.n);
    }
    b.n = 0;
}

void PcapSink::close() {
    if (split_) return close_split();
    if (dumper_ != nullptr && (pcap_dump_flush(dumper_) != 0 || failed_))
        spdlog::error("{}: writing the capture failed; it is incomplete",
                      params_.get_string("file"));
    release_handles();
}

void PcapSink::release_handles() {
    if (dumper_ != nullptr) pcap_dump_close(dumper_);
    if (dead_ != nullptr) pcap_close(dead_);
    dumper_ = nullptr;
    dead_ = nullptr;
}

TILEPIPE_STAGE(PcapSink, "pcap_out", "write every packet to a pcap file (Ethernet, ns timestamps)",
               param<std::string>("file", required,
                                  "pcap file to write (created or truncated); %p in it: one capture per "
                                  "output port, %p replaced by the port number"),
               param<uint64_t>("snaplen", 262144, "bytes kept per packet (1 to 262144)"));

}  // namespace tp
