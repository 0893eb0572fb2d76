// flow_table: per-flow accounting in a DPDK rte_hash, exported as CSV or JSON lines.
//
// Synopsis
//   - { stage: flow_table, capacity: 262144, idle_timeout: 30, export: flows.csv }
//   - { stage: flow_table, export: flows.jsonl, format: json, period: 10 }
//
// Parameters
//   capacity      flows the table holds at most                                  default 65536
//   idle_timeout  seconds without a packet after which a flow is exported (reason
//                 "idle") and removed; 0 = flows stay until the end             default 0
//   export        file the flows are written to; empty = no export              default ""
//   format        csv (one header line, then a line per flow) | json (lines)    default csv
//   period        seconds between snapshots of every live flow (reason
//                 "period"); 0 = none, only at the end                          default 0
//
// A flow is the canonical (direction-free) 5-tuple read from the headers `parse` found: IP
// version, protocol, and the two (address, port) endpoints ordered so that A->B and B->A are
// one flow; endpoint "a" is the lower one (address bytes, then port). Ports are those of TCP,
// UDP and SCTP; other IP protocols (ICMP, GRE, ...) are flows of their addresses with ports 0.
// Per flow: packets, wire bytes (each packet's length on the wire, descriptors/wire_length.hpp:
// for a capture taken with a short snapshot, the original lengths, as tshark's conversations
// count them, not the captured bytes), first and last seen, and the OR of every TCP flags
// byte seen (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, URG 0x20, ECE 0x40, CWR 0x80).
//
// Fragments: the first fragment of a TCP/UDP/SCTP datagram carries its ports and is counted
// with its flow; later fragments are counted with the same flow when the first was seen
// shortly before (a small direct-mapped cache of (addresses, protocol, IP id) -> ports), else
// they are skipped (event "fragment_unmatched"). Fragments of port-less protocols need no cache.
//
// Skipped, counted as events, the packet still passing on: "non_ip" (no IPv4/IPv6 header
// `parse` could use), "bad_l4" (a TCP/UDP/SCTP header or an IPv6 extension header cut short,
// or a TCP data offset below 5), "fragment_unmatched", "table_full" (a new flow while the
// table holds `capacity`). IPv6 extension-header chains are followed to their end, however
// long (parse stops after 8 and leaves such a packet untyped; tshark follows them all).
// Events "new_flow" and "expired" count flows created and removed by the idle timeout.
//
// first_ns/last_ns, nanoseconds since the Unix epoch: when the flow's packets carry a capture
// time (a `pcap` source replaying capture time, its default for one loop at top speed:
// descriptors/capture_time.hpp), the earliest and latest of them, as tshark shows the input;
// otherwise the time the first and last packet arrived here (the TSC at their burst, as the
// wall clock at open() plus TSC time since). The idle timeout always counts arrival time. Idle flows are found incrementally: each burst examines the next few
// table slots (kSweepSlotsPerBurst) in turn, so a whole table is swept every
// capacity / kSweepSlotsPerBurst bursts and nothing is examined per packet. Periodic
// snapshots walk the whole table once per period. close() exports every flow left (reason
// "end").
//
// Export lines, CSV:
//   reason,ip_version,proto,addr_a,port_a,addr_b,port_b,packets,wire_bytes,first_ns,last_ns,tcp_flags
//   end,4,6,10.0.0.1,51000,10.0.0.2,80,12,4312,1700000000123456789,1700000000223456789,27
// JSON lines: the same names as keys, addresses as strings, the rest as numbers.
//
// Threads: one table per stage instance, created without multi-writer flags: no locks on the
// packet path. A farm gives each worker its own instance; under flow_hash dispatch a flow
// stays on one worker (except that `parse` hashes fragments without ports, so a flow whose
// datagrams are sometimes fragmented may be split across workers). Instances exporting to
// the same path share one file: lines are buffered per instance and appended under a lock
// when the buffer fills, at each period and at close().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "descriptors/capture_time.hpp"
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct rte_hash;

namespace tp {

// The canonical 5-tuple: rte_hash's key (40 bytes, no padding left unset).
struct FlowKey {
    uint8_t addr_a[16];  // IPv4 in the first 4 bytes, the rest zero
    uint8_t addr_b[16];
    uint16_t port_a;     // host order
    uint16_t port_b;
    uint8_t proto;
    uint8_t ip_version;  // 4 or 6
    uint8_t pad[2];
};
static_assert(sizeof(FlowKey) == 40);

struct FlowStats {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t first_tsc = 0;
    uint64_t last_tsc = 0;
    uint64_t first_capture_ns = UINT64_MAX;  // earliest capture time of its packets that carry one
    uint64_t last_capture_ns = 0;            // latest
    uint8_t tcp_flags = 0;
    bool capture_time = false;  // some packet carried a capture time: first_ns/last_ns report them
};

struct Flow {
    FlowKey key;
    FlowStats stats;
};

class SharedOutputFile;

class FlowTable final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 3;  // a hash lookup and an update per packet
    static constexpr uint32_t kSweepSlotsPerBurst = 64;

    explicit FlowTable(const ParamValues& p);
    ~FlowTable() override;
    static uint64_t memory_hint(const ParamValues& p);
    static void check_params(const ParamValues& p);

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    // Live flows (not yet expired or exported at close), in table order.
    std::vector<Flow> flows() const;
    uint32_t flow_count() const { return count_; }

    // `key` as an export line ends would show it: "4,6,10.0.0.1,51000,10.0.0.2,80".
    static std::string key_text(const FlowKey& key);

private:
    struct Record {
        FlowKey key;
        FlowStats stats;
        bool live = false;
    };
    struct FragmentEntry;
    enum class Verdict : uint8_t { Flow, NonIp, BadL4, FragmentUnmatched };

    Verdict extract(const PacketDesc& d, FlowKey& key, uint8_t& tcp_flags);
    int32_t insert(const FlowKey& key, uint64_t now);
    void sweep(uint64_t now);
    void expire(uint32_t position);
    void export_flow(const Record& r, const char* reason);
    void flush_export();
    uint64_t tsc_to_ns(uint64_t tsc) const;

    ParamValues params_;
    uint32_t capacity_;
    uint64_t idle_cycles_ = 0;    // 0: no timeout
    int wire_offset_ = -1;        // descriptors/wire_length.hpp
    CaptureTimeField capture_time_;  // descriptors/capture_time.hpp
    uint64_t period_cycles_ = 0;  // 0: no periodic export
    bool json_ = false;

    rte_hash* table_ = nullptr;
    std::vector<Record> records_;  // by rte_hash position
    uint32_t count_ = 0;
    uint32_t sweep_cursor_ = 0;
    uint64_t next_period_tsc_ = 0;
    std::vector<FragmentEntry> fragments_;

    std::shared_ptr<SharedOutputFile> export_;
    std::string export_buffer_;
    uint64_t open_tsc_ = 0;
    uint64_t open_ns_ = 0;
    double ns_per_cycle_ = 0;

    uint16_t new_flow_, expired_, non_ip_, bad_l4_, fragment_unmatched_, table_full_;
};

}  // namespace tp
