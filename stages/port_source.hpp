// PortSource (`port`): receives packets from one RX queue of a DPDK ethdev port: a real NIC, or
// any virtual PMD (net_pcap, net_ring, net_tap, net_af_packet, net_null), so the same app runs
// on captures, loopbacks and NICs.
//
// Synopsis
//   source: { stage: port, device: "0000:01:00.0", rx_queue: 0, queues: 4 }
//   source: { stage: port, device: "net_pcap0,rx_pcap=caps/web.pcap" }
//   source: { stage: port, file: caps/web.pcap }          # the same, vdev made for the node
//
// Parameters
//   device        PCI address, name of an existing port, or a virtual device   (or `file`)
//                 spec (created at open when no port of that name exists)
//   file          a capture to replay through a net_pcap vdev named for the   (or `device`)
//                 node, with one rx_pcap (the whole file) per queue
//   rx_queue      RX queue this instance reads (set by the runner in a farm   default 0
//                 opening the pipeline: worker w reads queue w)
//   queues        RX (and TX) queues configured on the port; > 1 turns on RSS default 1
//   rxd           descriptors per RX queue                                    default 1024
//   promisc       promiscuous mode                                            default true
//   packets       end of stream after this many packets, 0 = until stopped    default 0
//   idle_timeout  end of stream after this many seconds with nothing          default 0
//                 received, 0 = never (see below for rx_pcap devices)
//
// Several instances (one per queue, e.g. the workers of a farm that opens the pipeline without
// an emitter, RSS style: `queues` then defaults to the worker count) share the port:
// the first to open configures and starts it with `queues`, `rxd`, `promisc` and its packet
// pool; the others only read their queue (see EthdevPort). The last to close stops the port.
//
// A NIC is named by its PCI address (`device: 0000:01:00.0`): EAL then scans the PCI bus for
// that device only (with no such stage it starts with --no-pci).
//
// A net_pcap device reading a file (`rx_pcap=`, without `infinite_rx=1`) never says that the
// file ended: it just stops delivering. Such a source counts the records of its queue's file
// at open and ends its stream once it has received them all, or, when some were lost on the
// way, once the device's counters (received + no mbuf + missed + errors) cover every record of
// every queue's file: the whole file is read however slowly the app drains it.
//
// Captures of another link type than Ethernet (Linux cooked, raw IP, 802.11/radiotap, ...),
// whether named by `file` or by a net_pcap `rx_pcap=`: net_pcap hands over the records as
// they are, and an ethdev port carries Ethernet, so each received record is rewritten into the
// Ethernet frame the `pcap` source replays for it (link_layer.hpp), in its mbuf. A record with
// no Ethernet form (an 802.11 management frame, ...) is freed and counted as the pcap source
// counts it (events capture.skipped.<reason> and capture.skipped_records, one warning per
// reason at close); it is not a packet of the source. A link type with no Ethernet form at all
// is refused at `file` (or `device`) by validate and run.
//
// Packets lost before the source: at close the source reads the device's rx_nombuf, imissed
// and ierrors (port-wide; each loss goes to one of the port's sources) into the events of the
// same names and into the report's `lost_before` of the stage, so delivered + dropped + lost
// before source is what the device saw.
//
// Descriptors: flow_hash is the NIC's RSS hash when the mbuf carries one (else 0, for `parse`
// to fill), port is the app's port id for this source, type 0. mbuf->port keeps the ethdev id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/capture/capture_reader.hpp"
#include "framework/capture/link_layer.hpp"
#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct rte_mempool;
struct rte_mbuf;

namespace tp {

class PortSource final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Source;
    // The PCI address `device` names, if any: EAL then probes that device only.
    static std::vector<std::string> pci_devices(const ParamValues& p);
    // The device spec the port opens: `device`, or a net_pcap vdev on `file`; LocatedError
    // when neither or both are given.
    static std::string device_of(const ParamValues& p);
    static void check_params(const ParamValues& p);

    explicit PortSource(const ParamValues& params);
    ~PortSource() override;

    void open(StageEnv& env) override;
    SourceStatus produce(Burst& b) override;
    void close() override;

    // The ethdev port id (valid between open() and close()).
    uint16_t port_id() const { return port_id_; }
    // Seconds of silence that end the stream, 0 = never.
    double idle_timeout() const { return idle_seconds_; }

private:
    void warn_damaged_file() const;  // close(): names the record net_pcap stopped at
    bool replay_ended();
    SourceStatus produce_normalised(Burst& b, rte_mbuf** m, uint16_t n);
    ParamValues params_;
    uint16_t queue_;
    uint16_t queues_;
    std::string device_;
    uint16_t rxd_;
    uint64_t limit_;          // packets, 0 = none
    double idle_seconds_;

    uint16_t port_id_ = 0;
    const rte_mempool* pool_ = nullptr;  // the app's: mbufs of others are not simple
    uint8_t desc_port_ = 0;
    bool opened_ = false;
    uint64_t received_ = 0;
    int wire_offset_ = -1;  // descriptors/wire_length.hpp: pkt_len as received
    uint64_t idle_cycles_ = 0;  // 0 = never
    uint64_t last_rx_tsc_ = 0;  // 0 until the first produce()
    struct Replay {             // a file replayed once through net_pcap
        bool active = false;
        uint64_t queue_total = 0;  // records in this queue's file
        uint64_t port_total = 0;   // records in every queue's file
    } replay_;
    uint16_t no_mbuf_ = 0, missed_ = 0, errors_ = 0;  // events
    LinkLayer link_;                     // of the file this queue replays (Ethernet: as received)
    std::vector<uint8_t> scratch_;       // to_ethernet's
    SkippedRecords skipped_;             // records with no Ethernet form, by reason
    uint16_t skipped_event_ = 0;
    uint16_t skip_reason_event_[kSkipReasons] = {};
};

}  // namespace tp
