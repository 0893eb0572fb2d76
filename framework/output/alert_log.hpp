// The JSON line an inspecting stage writes per alert, so that a tool (jq, a SIEM) can read
// what matched without opening a capture:
//   {"packet":N,"pattern":ID,"text":"...","length":L} plus, for IP packets that `parse` typed,
//   "ip":4|6,"src","dst","proto" and, for TCP and UDP, "sport","dport".
// `packet` is the 1-based number of the packet among those the stage instance saw (the first
// is 1, as Wireshark and tcpdump number a capture's packets: a single instance that sees every
// packet of a replayed capture gives the packet's number in the file). Alerts are
// the exception in the traffic: formatting one allocates, which the per-packet path never does.
#pragma once

#include <cstdint>
#include <string>

struct rte_mbuf;

namespace tp {

// Appends the alert's line, newline included, to `out`; `packet` is 1-based.
void append_alert_line(std::string& out, const rte_mbuf* m, uint64_t packet, uint32_t pattern,
                       const std::string& text);

}  // namespace tp
