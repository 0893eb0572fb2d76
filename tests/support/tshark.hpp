// Test support: tshark as an oracle for flow counts (installed on first use when it can be).
#pragma once

#include <sstream>
#include <string>

#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {

// Tunnel dissectors: with them off tshark sees only the outer headers, as `parse` does.
inline const char* const kTunnelDissectors[] = {"vxlan", "geneve", "gre", "mpls", "pppoes", "erspan", "nsh"};

inline bool tshark_available() {
    static const bool available = [] {
        if (run_command("tshark --version").status == 0) return true;
        // The test set-up installs it when it can (root or sudo, apt).
        run_command("bash '" + source_root() + "/scripts/bootstrap.sh' tshark");
        return run_command("tshark --version").status == 0;
    }();
    return available;
}

struct FlowCounts {
    long tcp = 0;
    long udp = 0;
};

// Conversations in tshark's `-z conv,tcp` and `-z conv,udp` tables, from one run; `tunnels`
// false disables the tunnel dissectors.
inline FlowCounts tshark_conversations(const std::string& file, bool tunnels) {
    std::string cmd = "tshark -n -q -z conv,tcp -z conv,udp";
    if (!tunnels)
        for (const char* d : kTunnelDissectors) cmd += std::string(" --disable-protocol ") + d;
    const CommandResult r = run_command(cmd + " -r '" + file + "'");
    FlowCounts c;
    long* table = nullptr;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("TCP Conversations") != std::string::npos) table = &c.tcp;
        if (line.find("UDP Conversations") != std::string::npos) table = &c.udp;
        if (table != nullptr && line.find("<->") != std::string::npos) ++*table;
    }
    return c;
}

}  // namespace tp::test
