/// @file
/// RelaxedCounter: a counter with one writer (the tile running a stage) and any number of
/// readers (the progress line, the report).
///
/// The writer adds with a relaxed load + relaxed store, which on x86 is a plain add to memory:
/// no lock prefix, no fence. Readers load relaxed and may see a value a few bursts old, never
/// a torn one. Two writers on one counter would lose updates; each counter belongs to exactly
/// one tile.
#pragma once

#include <atomic>
#include <cstdint>

namespace tp {

/// A 64-bit counter written by one thread and read by any.
class RelaxedCounter {
public:
    /// Adds `n` (owner thread only).
    void add(uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    /// Adds one (owner thread only).
    void inc() { add(1); }
    /// The current value, possibly a few updates old (any thread).
    uint64_t get() const { return v_.load(std::memory_order_relaxed); }
    /// Back to zero (owner thread only).
    void reset() { v_.store(0, std::memory_order_relaxed); }
    /// For a value that is not a sum (a TSC timestamp): same single writer, same relaxed readers.
    void set(uint64_t v) { v_.store(v, std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> v_{0};
};

}  // namespace tp
