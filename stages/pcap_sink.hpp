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
// is stamped with the wall-clock time of the burst that wrote it. Chained mbufs are linearised
// into one buffer allocated at open, never per packet. Records reach the disk through stdio's
// buffer: close() flushes and closes the file.
//
// Drops: `write_error` — once the file reports an error (disk full, I/O error) every packet of
// that burst and of the bursts after it is counted here instead of as delivered. Bytes lost in
// stdio's buffer before the error showed count as delivered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct pcap;
struct pcap_dumper;

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
    void close() override;

private:
    void release_handles();

    ParamValues params_;
    uint32_t snaplen_;
    uint16_t write_error_;
    struct pcap* dead_ = nullptr;      // libpcap's handle describing the file (no capture)
    struct pcap_dumper* dumper_ = nullptr;
    std::vector<uint8_t> linear_;      // one frame of a chain, laid out contiguously
    bool failed_ = false;              // the file reported a write error
};

}  // namespace tp
