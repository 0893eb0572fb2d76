// PortTx: packets a sink handed to each of its outputs when it sends by the descriptor's port
// (port_out with `devices`, pcap_out writing a capture per port). The runner asks every sink
// that implements SendsByPort for these when it builds the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tp {

struct PortTx {
    uint16_t port = 0;
    std::string to;        // the device or file that port's packets go to
    uint64_t packets = 0;  // handed to the device or written
};

class SendsByPort {
public:
    // Read after the run, once the tile that runs the sink was joined: a capture per port is
    // created by that tile on its port's first packet, unsynchronised.
    virtual std::vector<PortTx> tx_by_port() const = 0;

protected:
    ~SendsByPort() = default;
};

}  // namespace tp
