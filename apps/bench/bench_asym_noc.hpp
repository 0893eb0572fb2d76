// bench asym on the messaging network: the `udn` and `udn_eventdev` rows use the network's
// own many-to-one interface (AsymmetricCreditChannel: every sender pushes into the
// receiver's one queue) instead of N one-to-one channels and a scan, which is the point of
// the comparison.
#pragma once

#include <cstdint>
#include <string>

namespace tp::bench {

struct NocAsymResult {
    double one_way_ns = 0;
    uint64_t errors = 0;
    uint32_t credits = 0;  // K per sender: min(--capacity, queue_words / (2N))
};

bool is_noc_transport(const std::string& transport);  // udn, udn_eventdev

// Sender 0 (on cpu_a) ping-pongs with the receiver (on cpu_b) over N senders' interface on a
// network of N + 1 tiles with two queues each and 128-word queues; the reply returns on a
// CreditChannel of the same network. one-way = round trip / 2.
NocAsymResult measure_noc_asym(int cpu_a, int cpu_b, const std::string& transport, uint32_t senders, uint64_t iters,
                               uint32_t capacity);

}  // namespace tp::bench
