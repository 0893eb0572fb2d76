// SequenceCredit: how far an ordered farm's dispatcher may number packets ahead of its
// collector. A farm fed on demand passes a slow worker by: the others keep taking packets, and
// the collector holds everything numbered after the slow worker's oldest one in its reorder
// window. The collector publishes the next number it waits for; the dispatcher takes no new
// burst while it would leave more than `allowance` numbers out beyond it (round robin and
// flow hash need none: an ordered farm's dispatcher waits for a full worker there).
// Wake-up: a dispatcher held back idles like any blocked tile, and its thread may park; the
// collector rings that thread's doorbell after each release (Doorbell::ring: the Dekker pair
// with the parking thread's announce-then-re-poll), so no wake-up waits for a park timeout.
// Memory orders: `released` carries no data, only progress: relaxed on both sides, ordered
// for the wake-up by the doorbell's fences.
#pragma once

#include <atomic>
#include <cstdint>

#include "framework/channel/detail/cache_line.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp {

struct SequenceCredit {
    // Written by the collector only, read by the dispatcher: a line pair of its own.
    alignas(detail::kNoFalseSharing) std::atomic<uint32_t> released{0};
    uint32_t allowance = 0;
    Doorbell* dispatcher_bell = nullptr;  // the dispatcher's thread, when not the collector's
};

}  // namespace tp
