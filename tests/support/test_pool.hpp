// Test support: a packet pool of a test's own. DPDK pool names are unique per process, so each
// is named `prefix` and a serial number; the rest of `spec` is the caller's.
#pragma once

#include <atomic>
#include <string>

#include "descriptors/mbuf_pool.hpp"

namespace tp::test {

inline MbufPool named_pool(const std::string& prefix, MbufPoolSpec spec = {}) {
    static std::atomic<int> serial{0};
    spec.name = prefix + std::to_string(serial++);
    return MbufPool(spec);
}

}  // namespace tp::test
