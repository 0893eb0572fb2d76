// PcapSink (`pcap_out`): writes every packet it receives to a pcap file, then frees it.
//
// Synopsis
//   sink: { stage: pcap_out, file: out/seen.pcap, snaplen: 65535 }
//
// Parameters
//   file     pcap file to write (created or truncated at open)          required
//   snaplen  bytes kept per packet; longer frames are cut, their       default 262144
//            original length recorded (1 to 262144, libpcap's limit)
//
// The file is Ethernet (DLT_EN10MB) with nanosecond timestamps (magic a1b23c4d); each packet
// is stamped with the wall-clock time of the burst that wrote it. Records of a burst are laid
// out in one buffer allocated at open (chained mbufs copied segment by segment) and handed to
// the kernel with one write() per burst: a packet counts as delivered once its whole record
// was written, so nothing delivered waits in a buffer when the run ends.
//
// Drops: `write_error` — a write the file refuses (disk full, file too large, I/O error) drops
// exactly the packets whose records did not reach it, and the file is cut back to its last
// whole record. From then on every packet arriving is dropped the same way, the sink asks the
// run to stop (as Ctrl-C does), and close() throws an error naming the file: the run fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class PcapSink final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    static constexpr double kCost = 12;  // writes every packet into a file

    explicit PcapSink(const ParamValues& params);
    static void check_params(const ParamValues& params);
    ~PcapSink() override;

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    // Throws std::runtime_error naming the file when a write or the close failed.
    void close() override;

private:
    size_t write_out(size_t bytes);  // buf_[0, bytes) to the file; returns what reached it
    void after_failed_write();       // cut the file to whole records, stop the run

    ParamValues params_;
    uint32_t snaplen_;
    uint16_t write_error_;
    int fd_ = -1;
    std::vector<uint8_t> buf_;   // records of the burst being written (the file header first)
    size_t header_ = 0;          // bytes of buf_ that are the file header, not yet written
    uint64_t file_bytes_ = 0;    // whole records (and header) in the file
    bool failed_ = false;        // the file refused a write
    std::string error_;          // why
};

}  // namespace tp
