// dedup: drops a frame identical, byte for byte, to one of the last `window` frames it passed.
//
// Synopsis
//   - { stage: dedup, window: 4096 }
//
// Parameters
//   window  how many of the most recently passed frames a new frame is compared with  default 1024
//   copy_bytes  bytes kept for those frames' copies; 0 = 2048 per window slot         default 0
//
// How: every passed frame is hashed (CRC32-C over all its bytes, every segment) and copied
// into a circular byte arena; a table of chained buckets maps hashes to the frames in the
// window. A new frame whose hash and length match a stored frame is compared in full; equal
// means duplicate: it is dropped under "duplicate" and does not enter the window (so the
// window is the last `window` distinct frames passed on). The copies are needed because
// passed frames belong downstream, which may edit or free them.
//
// When the arena is too small for `window` frames of the traffic's sizes, the oldest copies
// are overwritten first and their frames leave the window early (event "window_shortened"
// counts frames that left that way); a frame longer than the whole arena is passed and never
// stored (event "too_long"). Nothing is allocated after open().
#pragma once

#include <cstdint>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct rte_mbuf;

namespace tp {

class Dedup final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;

    explicit Dedup(const ParamValues& p);
    static void check_params(const ParamValues& p);
    void process(Burst& b) override;

    uint32_t window() const { return window_; }
    uint64_t arena_bytes() const { return arena_.size(); }

private:
    static constexpr uint32_t kNone = UINT32_MAX;

    // One frame of the window.
    struct Slot {
        uint64_t start = 0;   // position of its copy in the arena's byte stream
        uint32_t length = 0;
        uint32_t hash = 0;
        uint32_t next = kNone;  // next slot in the same bucket
        bool used = false;
    };

    bool is_duplicate(const rte_mbuf* m, uint32_t length, uint32_t hash) const;
    bool still_stored(const Slot& s) const { return s.start + arena_.size() >= written_; }
    void remember(const rte_mbuf* m, uint32_t length, uint32_t hash);
    void forget(uint32_t slot);
    const uint8_t* copy_of(const Slot& s) const { return arena_.data() + (s.start % arena_.size()); }

    uint32_t window_;
    std::vector<Slot> slots_;        // ring of the window, oldest at next_slot_
    std::vector<uint32_t> buckets_;  // hash -> first slot; size a power of two
    uint32_t bucket_mask_ = 0;
    uint32_t next_slot_ = 0;
    std::vector<uint8_t> arena_;  // circular; a copy never wraps (the tail is skipped instead)
    uint64_t written_ = 0;        // bytes ever placed in the arena, skipped tails included

    uint16_t duplicate_;
    uint16_t too_long_;
    uint16_t shortened_;
};

}  // namespace tp
