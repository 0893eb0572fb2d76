#include "stages/tcpdump_expr.hpp"

#include <pcap/pcap.h>

#include <stdexcept>

namespace tp {

namespace {
constexpr int kSnapshot = 262144;  // tcpdump's default snapshot length

struct PcapCloser {
    void operator()(pcap_t* p) const { pcap_close(p); }
};
}  // namespace

void BpfProgramFree::operator()(bpf_program* p) const {
    if (p == nullptr) return;
    pcap_freecode(p);
    delete p;
}

BpfProgram compile_tcpdump_expr(const std::string& expr) {
    std::unique_ptr<pcap_t, PcapCloser> dead(pcap_open_dead(DLT_EN10MB, kSnapshot));
    if (!dead) throw std::runtime_error("libpcap cannot open a dead Ethernet handle");
    auto prog = std::make_unique<bpf_program>();
    if (pcap_compile(dead.get(), prog.get(), expr.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
        throw std::invalid_argument(pcap_geterr(dead.get()));
    return BpfProgram(prog.release());
}

}  // namespace tp
