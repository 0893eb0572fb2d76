// RelaxedCounter: a counter with one writer (its tile) and any number of readers.
//
// The writer adds with a relaxed load + relaxed store, which on x86 is a plain add to memory:
// no lock prefix, no fence. Readers (the progress line, the report) load relaxed and may see
// a value a few bursts old, never a torn one. Two writers on one counter would lose updates;
// each counter belongs to exactly one tile.
#pragma once

#include <atomic>
#include <cstdint>

namespace tp {

class RelaxedCounter {
public:
    void add(uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    void inc() { add(1); }
    uint64_t get() const { return v_.load(std::memory_order_relaxed); }
    void reset() { v_.store(0, std::memory_order_relaxed); }
    // For a value that is not a sum (a TSC timestamp): same single writer, same relaxed readers.
    void set(uint64_t v) { v_.store(v, std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> v_{0};
};

}  // namespace tp
