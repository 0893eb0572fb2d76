// Cache-line sizes the channels lay their memory out by.
#pragma once

#include <cstddef>

namespace tp::detail {

// One hardware cache line: the unit the paper's interface puts {ready, msg} and {ack} on.
inline constexpr std::size_t kCacheLine = 64;

// The distance that keeps data written by different threads from interfering. x86 cores
// (Intel's spatial prefetcher, AMD Zen's L2 up/down prefetcher) fetch lines in aligned
// 128-byte pairs, so a line written by one side next to a line polled by the other behaves
// as false sharing: each side's state, and each separately allocated block, starts on its own
// 128-byte pair.
inline constexpr std::size_t kNoFalseSharing = 128;

// Fetches the line holding `p` for writing: in one transfer, where a load and then a store to
// a line another core wrote take two (the load shares it, the store then has to take it).
// PREFETCHW: a hint, so a CPU without it (or another architecture's prefetch) only loses it.
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace tp::detail
