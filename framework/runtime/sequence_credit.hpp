// SequenceCredit: how far an ordered farm's dispatcher may number packets ahead of its
// collector. A farm fed on demand passes a slow worker by: the others keep taking packets, and
// the collector holds everything numbered after the slow worker's oldest one in its reorder
// window. The collector publishes the next number it waits for; the dispatcher takes no new
// burst while it would leave more than `allowance` numbers out beyond it (round robin and
// flow hash need none: an ordered farm's dispatcher waits for a full worker there).
// Wake-up: a dispatcher held back says so (`held`) and idles like any blocked tile, and its
// thread may park. A collector that moved `released` puts a seq_cst fence after that store and
// then, if the dispatcher is held, rings its thread's doorbell (Doorbell::ring_fenced): the
// Dekker pair with the dispatcher, which stores `held` before its thread's prepare_park fence
// and reads `released` when it polls again after it. So no wake-up waits for a park timeout,
// and a dispatcher idle for want of input is not woken per release.
// Memory orders: `released` and `held` carry no data, only progress: relaxed on both sides,
// ordered for the wake-up by those two fences.
// A node may be the collector of one ordered farm and, folded, the dispatcher of the next:
// NodeTaskSpec holds the two roles' credits apart.
#pragma once

#include <atomic>
#include <cstdint>

#include "framework/channel/detail/cache_line.hpp"
#include "framework/runtime/doorbell.hpp"

namespace tp {

struct SequenceCredit {
    // Written by the collector only, read by the dispatcher: a line pair of its own.
    alignas(detail::kNoFalseSharing) std::atomic<uint32_t> released{0};
    // Written by the dispatcher when it is held back and when it goes on, read by the collector.
    alignas(detail::kNoFalseSharing) std::atomic<bool> held{false};
    uint32_t allowance = 0;
    Doorbell* dispatcher_bell = nullptr;  // the dispatcher's thread, when not the collector's
};

}  // namespace tp
