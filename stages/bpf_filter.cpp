#include "stages/bpf_filter.hpp"

#include <pcap/pcap.h>
#include <rte_bpf.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <cstddef>
#include <memory>
#include <vector>
#include <stdexcept>

#include "descriptors/wire_length.hpp"
#include "framework/stage/registry.hpp"
#include "stages/tcpdump_expr.hpp"

namespace tp {

namespace {

// Linux socket-filter metadata: classic BPF loads at these negative offsets read the socket
// buffer, not the packet. Offsets from <linux/filter.h>.
constexpr int32_t kAncillaryBase = -0x1000;  // SKF_AD_OFF

const char* ancillary_name(int32_t offset) {
    switch (offset) {
        case 0: return "SKF_AD_PROTOCOL (the socket buffer's protocol)";
        case 4: return "SKF_AD_PKTTYPE (packet direction: inbound/outbound)";
        case 8: return "SKF_AD_IFINDEX (interface index: ifindex)";
        case 12: return "SKF_AD_NLATTR (netlink attribute)";
        case 16: return "SKF_AD_NLATTR_NEST (nested netlink attribute)";
        case 20: return "SKF_AD_MARK (socket buffer mark)";
        case 24: return "SKF_AD_QUEUE (receive queue)";
        case 28: return "SKF_AD_HATYPE (interface hardware type)";
        case 32: return "SKF_AD_RXHASH (receive hash)";
        case 36: return "SKF_AD_CPU (current CPU)";
        case 40: return "SKF_AD_ALU_XOR_X";
        case 44: return "SKF_AD_VLAN_TAG (VLAN tag stripped by the kernel)";
        case 48: return "SKF_AD_VLAN_TAG_PRESENT (VLAN tag stripped by the kernel)";
        case 52: return "SKF_AD_PAY_OFFSET (payload offset)";
        case 56: return "SKF_AD_RANDOM (random number)";
        case 60: return "SKF_AD_VLAN_TPID (VLAN TPID stripped by the kernel)";
        default: return nullptr;
    }
}

// The first construct in `prog` DPDK's converter cannot express, or "" when there is none.
std::string unsupported_construct(const bpf_program& prog) {
    for (u_int i = 0; i < prog.bf_len; ++i) {
        const bpf_insn& in = prog.bf_insns[i];
        if (in.code == (BPF_JMP | BPF_JA) && int64_t(i) + 1 + int32_t(in.k) <= int64_t(i))
            return "it jumps backwards (classic BPF instruction " + std::to_string(i) +
                   "), a loop libpcap emits for `protochain`; DPDK's BPF converter and verifier "
                   "accept forward jumps only";
        if (BPF_CLASS(in.code) != BPF_LD) continue;
        const int mode = BPF_MODE(in.code);
        if (mode != BPF_ABS && mode != BPF_IND) continue;
        const int32_t k = static_cast<int32_t>(in.k);
        if (k >= 0) continue;
        const std::string where = " (classic BPF instruction " + std::to_string(i) + ")";
        if (mode == BPF_ABS && k >= kAncillaryBase) {
            const char* name = ancillary_name(k - kAncillaryBase);
            return std::string("it reads Linux socket metadata ") +
                   (name != nullptr ? name : ("at offset " + std::to_string(k)).c_str()) + where +
                   ", which only a Linux socket has and DPDK's BPF converter does not support";
        }
        return "it loads from the negative packet offset " + std::to_string(k) + where +
               ", a Linux socket extension DPDK's BPF converter does not support";
    }
    return "";
}

// rte_bpf_convert (lib/bpf/bpf_convert.c) picks an indirect load's index register from the
// BPF_X bit of the classic opcode, but in the load class that bit belongs to the size (it is set
// for halfwords only), so byte and word indirect loads (`tcp[tcpflags]`, `tcp[20:4]`) would
// index with A instead of X and read the wrong bytes. In a converted program X lives in R7 and
// every indirect load indexes with it: set it. Harmless where the converter got it right.
void fix_indirect_loads(rte_bpf_prm& prm) {
    constexpr uint8_t kConvertedX = EBPF_REG_7;
    auto* ins = const_cast<ebpf_insn*>(prm.ins);  // the converter's own allocation
    for (uint32_t i = 0; i < prm.nb_ins; ++i)
        if (BPF_CLASS(ins[i].code) == BPF_LD && BPF_MODE(ins[i].code) == BPF_IND)
            ins[i].src_reg = kConvertedX;
}

// rte_bpf_convert turns classic BPF's `len` (BPF_LD|BPF_LEN, behind `greater` and `less`) into a
// word load of the mbuf's pkt_len from the context register: the captured bytes. tcpdump's `len`
// is the length on the wire, which sources keep in a dynamic field: every such load reads that
// field instead. Only `len` loads from the mbuf header (packet loads are BPF_LD|BPF_ABS/IND), so
// a word load at pkt_len's offset is one. Returns how many were redirected.
uint32_t load_wire_length(rte_bpf_prm& prm) {
    const int wire = wire_length_offset();
    auto* ins = const_cast<ebpf_insn*>(prm.ins);  // the converter's own allocation
    uint32_t n = 0;
    for (uint32_t i = 0; i < prm.nb_ins; ++i)
        if (ins[i].code == (BPF_LDX | BPF_MEM | BPF_W) && ins[i].off == int16_t(offsetof(rte_mbuf, pkt_len))) {
            ins[i].off = static_cast<int16_t>(wire);
            ++n;
        }
    return n;
}

// DPDK's x86-64 JIT encodes `jset` against an immediate as x86 `test r/m64, imm` but writes the
// immediate in one byte when it fits one; that instruction always takes four, so the CPU eats
// three bytes of the next instruction: wrong verdicts or a crash (`tcp[tcpflags] & tcp-syn != 0`
// tests against 2). The interpreter is right. Returns the program with every such `jset` turned
// into `mov64 R9, imm; jset A, R9` (R9 is free in a converted program) and every jump offset
// moved to match; the same program serves the JIT and the interpreter. Empty when a moved jump
// no longer fits its 16-bit offset.
std::vector<ebpf_insn> without_short_jset_immediates(const ebpf_insn* ins, uint32_t count) {
    constexpr uint8_t kScratch = EBPF_REG_9;
    auto short_jset = [](const ebpf_insn& i) {
        return i.code == (BPF_JMP | BPF_JSET | BPF_K) && i.imm == int32_t(int8_t(i.imm));
    };
    std::vector<uint32_t> start(count + 1);  // where each original instruction begins now
    std::vector<ebpf_insn> out;
    out.reserve(count + 16);
    for (uint32_t i = 0; i < count; ++i) {
        start[i] = static_cast<uint32_t>(out.size());
        if (short_jset(ins[i])) {
            out.push_back(ebpf_insn{static_cast<uint8_t>(EBPF_ALU64 | EBPF_MOV | BPF_K), kScratch, 0, 0,
                                    ins[i].imm});
            ebpf_insn jset = ins[i];
            jset.code = BPF_JMP | BPF_JSET | BPF_X;
            jset.src_reg = kScratch;
            jset.imm = 0;
            out.push_back(jset);
        } else {
            out.push_back(ins[i]);
        }
    }
    start[count] = static_cast<uint32_t>(out.size());
    if (out.size() == count) return out;
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t op = BPF_OP(ins[i].code);
        if (BPF_CLASS(ins[i].code) != BPF_JMP || op == EBPF_CALL || op == EBPF_EXIT) continue;
        const int64_t target = int64_t(i) + 1 + ins[i].off;  // in the original program
        const uint32_t at = start[i + 1] - 1;                 // the jump itself, now
        if (target < 0 || target > int64_t(count)) continue;  // rte_bpf_load rejects it anyway
        const int64_t off = int64_t(start[target]) - int64_t(at) - 1;
        if (off < INT16_MIN || off > INT16_MAX) return {};  // beyond a jump's reach
        out[at].off = static_cast<int16_t>(off);
    }
    return out;
}

struct RteFree {
    void operator()(void* p) const { rte_free(p); }
};

}  // namespace

bpf_program* BpfFilter::compile(const ParamValues& params) {
    const std::string& expr = params.get_string("expr");
    BpfProgram prog;
    try {
        prog = compile_tcpdump_expr(expr);
    } catch (const std::invalid_argument& e) {
        params.fail("expr", "bad filter expression '" + expr + "': " + e.what());
    }
    const std::string why = unsupported_construct(*prog);
    if (!why.empty()) params.fail("expr", "filter expression '" + expr + "' cannot run on DPDK: " + why);
    return prog.release();
}

void BpfFilter::check_params(const ParamValues& params) { BpfProgramFree{}(compile(params)); }

BpfFilter::BpfFilter(const ParamValues& params)
    : Stage(kKind),
      params_(params),
      expr_(params.get_string("expr")),
      invert_(params.get_bool("invert")),
      want_jit_(params.get_bool("jit")),
      program_(compile(params)) {
    reject_ = declare_drop(invert_ ? "matched" : "no_match");
}

BpfFilter::~BpfFilter() {
    unload();
    if (program_ != nullptr) BpfProgramFree{}(program_);
}

uint32_t BpfFilter::classic_instructions() const { return program_ != nullptr ? program_->bf_len : 0; }

void BpfFilter::load() {
    auto cannot_run = [&](const std::string& why) {
        params_.fail("expr", "filter expression '" + expr_ + "' cannot run on DPDK: " + why);
    };
    const std::unique_ptr<rte_bpf_prm, RteFree> prm(rte_bpf_convert(program_));
    if (!prm) cannot_run(std::string("rte_bpf_convert failed (") + rte_strerror(rte_errno) + ")");
    fix_indirect_loads(*prm);
    load_wire_length(*prm);
    const std::vector<ebpf_insn> code = without_short_jset_immediates(prm->ins, prm->nb_ins);
    if (code.empty()) cannot_run("the program is too long for DPDK's BPF jumps");
    rte_bpf_prm fixed = *prm;
    fixed.ins = code.data();
    fixed.nb_ins = static_cast<uint32_t>(code.size());
    bpf_ = rte_bpf_load(&fixed);  // keeps its own copy of the instructions
    if (bpf_ == nullptr)
        cannot_run(std::string("rte_bpf_load refused the converted program (") + rte_strerror(rte_errno) + ")");
    rte_bpf_jit jit{};
    if (want_jit_ && rte_bpf_get_jit(bpf_, &jit) == 0 && jit.func != nullptr) jit_ = jit.func;
}

void BpfFilter::unload() {
    if (bpf_ != nullptr) rte_bpf_destroy(bpf_);
    bpf_ = nullptr;
    jit_ = nullptr;
}

void BpfFilter::open(StageEnv&) {
    unload();
    load();
}

void BpfFilter::process(Burst& b) {
    const uint16_t n = b.n;
    uint64_t verdict[kBurstMax];
    if (jit_ != nullptr) {
        for (uint16_t i = 0; i < n; ++i) {
            if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(b.d[i + 1].mbuf, const void*));
            verdict[i] = jit_(b.d[i].mbuf);
        }
    } else {
        void* ctx[kBurstMax];
        for (uint16_t i = 0; i < n; ++i) ctx[i] = b.d[i].mbuf;
        rte_bpf_exec_burst(bpf_, ctx, verdict, n);
    }
    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
        if ((verdict[i] != 0) != invert_) b.d[kept++] = b.d[i];
        else drop(b.d[i], reject_);
    }
    b.n = kept;
}

void BpfFilter::close() { unload(); }

TILEPIPE_STAGE(BpfFilter, "bpf_filter",
               "keep packets matching a tcpdump filter expression (libpcap + DPDK BPF)",
               param<std::string>("expr", required,
                                  "tcpdump filter expression (pcap-filter(7)), compiled for "
                                  "Ethernet; \"\" keeps everything; non-matching packets are "
                                  "dropped as \"no_match\""),
               param<bool>("invert", false,
                           "keep the packets the expression rejects instead (matching ones "
                           "are dropped as \"matched\")"),
               param<bool>("jit", true,
                           "run DPDK's native code for the program where DPDK has a JIT; "
                           "false = DPDK's BPF interpreter"));

}  // namespace tp
