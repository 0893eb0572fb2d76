// ChaosStall: a tile held up on purpose (the app's `chaos:` setting), to see the rest of the
// app cope: once its node has taken `after_packets` packets, it takes nothing and sends nothing
// for `stall_ms`, once. Its input channels fill, the nodes before it back off, and nothing is
// lost. The node's poll reports no work meanwhile, so its thread parks as for an idle tile
// (and wakes within the park timeout when the stall ends); nothing blocks.
// Single-threaded: owned and polled by the node's tile.
#pragma once

#include <rte_cycles.h>

#include <cstdint>

namespace tp {

class ChaosStall {
public:
    ChaosStall(uint64_t after_packets, uint64_t stall_ms)
        : after_(after_packets), cycles_(stall_ms * rte_get_tsc_hz() / 1000) {}

    // True while a node that has taken `taken` packets must stay still.
    bool holds(uint64_t taken) {
        if (over_ || taken < after_) return false;
        const uint64_t now = rte_rdtsc();
        if (until_ == 0) {
            until_ = now + cycles_;
            started_ = now;
        }
        if (now < until_) return true;
        over_ = true;
        ended_ = now;
        return false;
    }
    // How long it stood still, in TSC cycles (so far, while it lasts; 0 if it never began).
    uint64_t stalled_cycles() const { return until_ == 0 ? 0 : over_ ? ended_ - started_ : rte_rdtsc() - started_; }

private:
    uint64_t after_, cycles_;
    uint64_t until_ = 0, started_ = 0, ended_ = 0;
    bool over_ = false;
};

}  // namespace tp
