// Filter expressions compiled as tcpdump compiles them for an Ethernet capture (libpcap's
// pcap_compile on a dead handle): what `bpf_filter` and `classify` accept.
#pragma once

#include <memory>
#include <string>

struct bpf_program;

namespace tp {

struct BpfProgramFree {
    void operator()(bpf_program* p) const;  // pcap_freecode, then the struct
};
using BpfProgram = std::unique_ptr<bpf_program, BpfProgramFree>;

// Throws std::invalid_argument with libpcap's message for a bad expression.
BpfProgram compile_tcpdump_expr(const std::string& expr);

}  // namespace tp
