// AhoCorasick: finds every occurrence of many byte patterns in one pass over a text (Aho &
// Corasick, "Efficient string matching", CACM 1975).
//
// The automaton is compiled to a complete DFA over byte classes: bytes that occur in no pattern
// share one class, every other byte (or, with `nocase`, every letter pair) gets its own, so
// the transition table is states x classes rather than states x 256, with 16-bit entries when
// it has fewer than 32768 of them. A step is two table reads, an AND and an add; there are no
// failure links to chase at run time. Matches come out through output links (a state's own
// patterns, then those of its longest accepting proper suffix).
//
// Scanning is streaming: scan() returns the state to resume from, so a text split over several
// buffers (mbuf segments) is matched exactly as if it were contiguous.
//
// Thread-safety: immutable after construction; scan() may run from any number of threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tp {

class AhoCorasick {
public:
    // Where a scan stands: an opaque cursor into the transition table (not a state number).
    using State = uint32_t;

    // `patterns` must be non-empty strings (throws std::invalid_argument otherwise). With
    // `nocase`, ASCII letters match either case. Pattern ids are indices into `patterns`;
    // duplicates are allowed and reported under each id.
    explicit AhoCorasick(const std::vector<std::string>& patterns, bool nocase = false);

    static constexpr State start() { return 0; }
    size_t states() const { return states_; }
    size_t classes() const { return classes_; }
    size_t patterns() const { return pattern_count_; }
    size_t table_bytes() const { return narrow_ ? next16_.size() * 2 : next32_.size() * 4; }

    State step(State s, uint8_t byte) const {
        return narrow_ ? next16_[(s & ~kAccept16) + class_of_[byte]] : next32_[(s & ~kAccept32) + class_of_[byte]];
    }
    bool accepting(State s) const { return (s & (narrow_ ? kAccept16 : kAccept32)) != 0; }

    // Calls on_match(pattern_id, end) for every pattern ending at `s`, longest first; `end` is
    // passed through (the caller's offset just past the match).
    template <typename OnMatch>
    void report(State s, size_t end, OnMatch&& on_match) const {
        for (uint32_t t = state_of(s); t != kNoState; t = output_link_[t])
            for (uint32_t i = output_begin_[t]; i < output_begin_[t + 1]; ++i) on_match(outputs_[i], end);
    }

    // Feeds `n` bytes from `s`; calls on_match(pattern_id, offset just past the match, counted
    // from `base`) for each occurrence, in text order; returns where the scan stands.
    template <typename OnMatch>
    State scan(State s, const uint8_t* text, size_t n, size_t base, OnMatch&& on_match) const {
        return narrow_ ? run<uint16_t>(next16_.data(), s, text, n, base, on_match)
                       : run<uint32_t>(next32_.data(), s, text, n, base, on_match);
    }

private:
    static constexpr uint32_t kNoState = UINT32_MAX;
    // A table entry is the target's row offset (state x classes), its top bit set when the
    // target accepts: the hot loop needs no multiply and no second table to know it matched.
    static constexpr uint32_t kAccept16 = 0x8000;
    static constexpr uint32_t kAccept32 = 0x80000000u;

    uint32_t state_of(State s) const {
        return static_cast<uint32_t>((s & ~(narrow_ ? kAccept16 : kAccept32)) / classes_);
    }

    template <typename T, typename OnMatch>
    State run(const T* next, State s, const uint8_t* text, size_t n, size_t base, OnMatch& on_match) const {
        constexpr T kAccept = T(T(1) << (sizeof(T) * 8 - 1));
        const uint8_t* cls = class_of_.data();
        T cur = static_cast<T>(s);
        for (size_t i = 0; i < n; ++i) {
            cur = next[(cur & T(~kAccept)) + cls[text[i]]];
            if (cur & kAccept) [[unlikely]] report(cur, base + i + 1, on_match);
        }
        return cur;
    }

    size_t states_ = 0;
    size_t classes_ = 1;
    size_t pattern_count_ = 0;
    bool narrow_ = false;  // 16-bit entries: the table is small enough, and half the cache
    std::array<uint8_t, 256> class_of_{};
    std::vector<uint16_t> next16_;         // states x classes, when narrow_
    std::vector<uint32_t> next32_;         // otherwise
    std::vector<uint32_t> output_link_;    // per state: next state down the suffix chain with output
    std::vector<uint32_t> output_begin_;   // per state: its own pattern ids in outputs_
    std::vector<uint32_t> outputs_;
};

}  // namespace tp
