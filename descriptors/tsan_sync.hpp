// Happens-before edges for ThreadSanitizer where the synchronisation lives in code it cannot
// see: DPDK's rte_ring (x86 ordering with volatile stores, inlined from its headers), its
// event devices and its mempool handlers (uninstrumented libraries: an mbuf freed on one CPU
// and allocated on another passes through them). A sender calls tsan_release(obj) before handing
// data over, the receiver tsan_acquire(obj) after taking it, so what the data points to (mbufs,
// task slots) is not reported as racing. Compiles to nothing without TSan.
#pragma once

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace tp {

#if defined(__SANITIZE_THREAD__)
inline void tsan_release(void* sync) { __tsan_release(sync); }
inline void tsan_acquire(void* sync) { __tsan_acquire(sync); }
#else
inline void tsan_release(void*) {}
inline void tsan_acquire(void*) {}
#endif

}  // namespace tp
