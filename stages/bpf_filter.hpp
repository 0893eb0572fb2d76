// BpfFilter (`bpf_filter`): keeps the packets a tcpdump filter expression accepts.
//
// Synopsis
//   - { name: filter, stage: bpf_filter, expr: "tcp port 80 or udp port 53" }
//
// Parameters
//   expr    tcpdump filter expression (pcap-filter(7)); "" accepts everything   required
//   invert  keep the packets the expression rejects instead                     default false
//   jit     run DPDK's native code for the program where DPDK has a JIT         default true
//           (x86-64, arm64); false, or no JIT: DPDK's interpreter
//
// How: the constructor compiles `expr` with libpcap exactly as tcpdump does for an Ethernet
// capture file (pcap_open_dead(DLT_EN10MB, 262144), optimised, netmask unknown); open()
// converts the classic BPF program with rte_bpf_convert, loads it with rte_bpf_load (which
// verifies it) and takes the JIT's entry point. process() runs the program once per packet
// (native code called in a loop, or rte_bpf_exec_burst over the burst); a non-zero return is a
// match. No allocation, lock or log per packet.
//
// What the program sees (the promises tcpdump parity rests on):
//   - Packet loads (classic BPF's absolute and indirect loads) read the frame from its first
//     byte through rte_pktmbuf_read: a chained mbuf is read across its segments, never past
//     pkt_len, with no copy when the bytes lie in one segment. A load past the end makes the
//     program return 0 (no match), as in classic BPF, so a short or truncated frame is safe.
//   - `len` (and so `greater N`, `less N`) is the packet's length on the wire, as in tcpdump:
//     the wire-length field sources set (descriptors/wire_length.hpp), which for a capture is
//     the original length each record recorded, so a capture taken with a snapshot shorter
//     than its frames filters as tcpdump filters it. (For a capture of another link type it is
//     that length with the link header normalised to Ethernet's 14 bytes.)
//   - The program does not depend on `parse`: it reads the Ethernet header itself.
//
// Two defects of DPDK 22.11's BPF library are worked around at open(), before rte_bpf_load:
//   - rte_bpf_convert gives indirect byte and word loads (`tcp[13]`, `tcp[20:4]`) the index
//     register A instead of X; every indirect load of the converted program is set to index
//     with X, as classic BPF means.
//   - the x86-64 JIT encodes `jset` against a constant of one byte with a one-byte immediate
//     where x86's `test` takes four (wrong verdicts, or a crash, on `tcp[tcpflags] & tcp-syn`);
//     such a test is rewritten to go through a free register, and the jumps moved to match.
// Both are checked by the tests with the JIT and with the interpreter.
//
// Refused at construction or open() (LocatedError at `expr`): an expression libpcap rejects
// (its message is kept), and a program DPDK cannot run. libpcap only emits Linux socket
// metadata loads (SKF_AD_*: direction, interface index, VLAN tag offloaded by the kernel) for
// `inbound`, `outbound`, `ifindex` and similar; DPDK's converter has none of them, and the
// error names the construct. `protochain` is refused too: libpcap compiles it into a loop
// (a backward jump), which DPDK's converter and verifier reject. `vlan` needs no metadata here: for a capture-file style Ethernet
// handle libpcap tests the EtherType in the frame (0x8100, 0x88a8, 0x9100), as `tcpdump -r` does.
//
// Drops: `no_match` (packets the expression rejects); with invert, `matched` instead.
#pragma once

#include <cstdint>
#include <string>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct bpf_program;
struct rte_bpf;

namespace tp {

class BpfFilter final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static constexpr double kCost = 0.5;  // a short filter program per packet
    static double expected_pass(const ParamValues&) { return 0.5; }  // unknowable: a guess

    explicit BpfFilter(const ParamValues& params);
    // Compiles `expr` with libpcap and refuses what DPDK's converter cannot take: the whole
    // check, without EAL (only the eBPF load itself waits for open()).
    static void check_params(const ParamValues& params);
    ~BpfFilter() override;

    void open(StageEnv& env) override;
    void process(Burst& b) override;
    void close() override;

    // After open(): whether packets run through native code (else the interpreter).
    bool jitted() const { return jit_ != nullptr; }
    // Length of the classic BPF program libpcap produced.
    uint32_t classic_instructions() const;

private:
    static bpf_program* compile(const ParamValues& params);
    void load();
    void unload();

    ParamValues params_;
    std::string expr_;
    bool invert_;
    bool want_jit_;
    bpf_program* program_ = nullptr;  // libpcap's classic program (owned; pcap_freecode)
    rte_bpf* bpf_ = nullptr;
    uint64_t (*jit_)(void*) = nullptr;
    uint16_t reject_;  // drop reason
};

}  // namespace tp
