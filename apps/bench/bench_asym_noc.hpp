// bench asym on the messaging network: the `udn` and `udn_eventdev` rows use the network's
// own many-to-one interface (AsymmetricCreditChannel: every sender pushes into the
// receiver's one queue) instead of N one-to-one channels and a scan, which is the point of
// the comparison.
#pragma once

#include <cstdint>
#include <string>

#include "apps/bench/bench_pingpong_measure.hpp"
#include "apps/bench/harness.hpp"

namespace tp::bench {

struct NocAsymResult {
    OneWay one_way;        // as bench pingpong times it (TSC ticks)
    uint32_t credits = 0;  // K per sender: min(--capacity, queue_words / (2N))
};

bool is_noc_transport(const std::string& transport);  // udn, udn_eventdev

// Sender 0 (on c.cpu_a) ping-pongs with the receiver (on c.cpu_b) over N senders' interface
// on a network of N + 1 tiles with two queues each and 128-word queues; the reply returns on
// a CreditChannel of the same network. Timed by bench pingpong's harness.
NocAsymResult measure_noc_asym(const Common& c, const std::string& transport, uint32_t senders, uint64_t iters,
                               uint32_t capacity);

}  // namespace tp::bench
