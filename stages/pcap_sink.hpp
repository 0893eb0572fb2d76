// PcapSink (`pcap_out`): writes every packet it receives to a pcap file, then frees it.
//
// Synopsis
//   sink: { stage: pcap_out, file: out/seen.pcap, snaplen: 65535 }
//   sink: { stage: pcap_out, file: out/port%p.pcap }      # a capture per output port
//
// Parameters
//   file     pcap file to write (created or truncated at open); with   required
//            `%p` in it, one capture per port (below)
//   snaplen  bytes kept per packet; longer frames are cut, their       default 262144
//            original length recorded (1 to 262144, libpcap's limit)
//
// Each record's original length is the packet's wire length (descriptors/wire_length.hpp),
// so a capture replayed through a chain that passes its packets is written with the same
// `len` fields it was read with, snapshot-truncated records included.
//
// The file is Ethernet (DLT_EN10MB) with nanosecond timestamps (magic a1b23c4d). A packet's
// record carries its capture time when it has one (a `pcap` source replaying capture time,
// its default for one loop at top speed: descriptors/capture_time.hpp), so a capture passed
// through keeps the timestamps tcpdump shows for the input; any other packet is stamped with
// the wall-clock time of the burst that wrote it. Records of a burst are laid
// out in one buffer allocated at open (chained mbufs copied segment by segment) and handed to
// the kernel with one write() per burst: a packet counts as delivered once its whole record
// was written, so nothing delivered waits in a buffer when the run ends.
//
// Split by port: when `file` holds `%p`, each packet goes to the capture of its descriptor's
// port (PacketDesc::port, which lpm_route sets): `%p` is replaced by the port number, 0-255
// (out/port2.pcap). A port's capture is created (or truncated) when its first packet arrives,
// so ports that get nothing leave no file; each is written exactly as a single capture is, and
// its drops count here. The run report lists the packets each port's capture received. Bursts
// are sorted by port with fixed arrays (PortGroups); only a port's first packet allocates.
//
// Drops: `write_error` — a write the file refuses (disk full, file too large, I/O error) drops
// exactly the packets whose records did not reach it, and the file is cut back to its last
// whole record. From then on every packet arriving is dropped the same way, the sink asks the
// run to stop (as Ctrl-C does), and close() throws an error naming the file: the run fails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/capture_time.hpp"
#include "descriptors/port_groups.hpp"
#include "framework/metrics/port_tx.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class PcapSink final : public Stage, public SendsByPort {
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

    // With `%p` in `file`: packets written to each port's capture, by port (else empty).
    std::vector<PortTx> tx_by_port() const override;

    // `file` with `%p` replaced by `port`.
    static std::string port_file(const std::string& pattern, unsigned port);

private:
    size_t write_out(size_t bytes);  // buf_[0, bytes) to the file; returns what reached it
    void after_failed_write();       // cut the file to whole records, stop the run

    // Split by port (pcap_sink_split.cpp): a PcapSink per port's capture, fed each port's share.
    void open_split(StageEnv& env);
    void process_split(Burst& b);
    void close_split();
    PcapSink* port_sink(uint8_t port);  // created on the port's first packet; null if it failed
    void take_drops(size_t port);       // counts here what the port's capture dropped since last

    ParamValues params_;
    uint32_t snaplen_;
    uint16_t write_error_;
    int fd_ = -1;
    CaptureTimeField capture_time_;    // set with wire_offset_
    int wire_offset_ = -1;  // descriptors/wire_length.hpp, looked up at the first burst
    std::vector<uint8_t> buf_;   // records of the burst being written (the file header first)
    size_t header_ = 0;          // bytes of buf_ that are the file header, not yet written
    uint64_t file_bytes_ = 0;    // whole records (and header) in the file
    bool failed_ = false;        // the file refused a write
    std::string error_;          // why

    // Split by port.
    bool split_ = false;               // `file` holds %p
    StageEnv env_;                     // what the ports' captures open with
    struct PortFile {
        std::unique_ptr<PcapSink> sink;
        std::vector<uint64_t> drops_seen;  // its per-reason drops already counted here
        std::string error;                 // why its file could not be created, if it could not
    };
    std::vector<PortFile> ports_;      // by port, 256 when split
    struct alignas(64) PortCounter : RelaxedCounter {};
    std::unique_ptr<PortCounter[]> written_;  // by port; this stage's tile writes them
    PortGroups groups_;
};

}  // namespace tp
