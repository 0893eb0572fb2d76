#include "framework/runtime/latency_probe.hpp"

#include <algorithm>

namespace tp {

void SinkLatency::record(uint64_t now) {
    for (uint16_t k = 0; k < picked_; ++k) {
        if (dropped_.n != 0 && std::find(dropped_.mbuf, dropped_.mbuf + dropped_.n, mbuf_[k]) != dropped_.mbuf + dropped_.n)
            continue;
        hist_.record(NodeResidence::since(stamp_[k], now));
    }
    picked_ = 0;
    dropped_.n = 0;
}

}  // namespace tp
