// ReorderWindow: an ordered farm's collector restores emission order with it.
//
// Packets carry consecutive sequence numbers from the emitter; workers return them in any
// order, and report the numbers their stages dropped (a hole marker), so every number arrives
// exactly once. A number is stored at its slot; release() hands out the longest in-order run
// from the next expected number. Back-pressure bounds how far ahead any number can be (the
// emitter can be at most the farm's queue capacities ahead of the collector), so a window of
// that size never overflows; an arrival outside it is a runtime bug and throws.
// Single-threaded: owned by the collector's tile.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "descriptors/packet_desc.hpp"

namespace tp {

class ReorderWindow {
public:
    explicit ReorderWindow(uint32_t at_least) {
        uint32_t size = 64;
        while (size < at_least) size <<= 1;
        slots_.resize(size);
        mask_ = size - 1;
    }

    // The next number in order: every number before it has been released.
    uint32_t next() const { return next_; }

    // `d.mbuf == nullptr` marks a hole (a dropped number).
    void insert(uint32_t seq, const PacketDesc& d) {
        if (seq - next_ > mask_) throw std::logic_error("reorder window overflow: sequence too far ahead");
        Slot& s = slots_[seq & mask_];
        if (s.full) throw std::logic_error("sequence number delivered twice");
        s.full = true;
        s.d = d;
    }

    // Moves in-order packets into `out` (up to `room`), skipping holes; returns how many.
    uint32_t release(PacketDesc* out, uint32_t room) {
        uint32_t n = 0;
        while (n < room) {
            Slot& s = slots_[next_ & mask_];
            if (!s.full) break;
            s.full = false;
            ++next_;
            if (s.d.mbuf != nullptr) out[n++] = s.d;
        }
        return n;
    }

    // End of stream: numbers still missing will never come (their worker failed). Moves what
    // is held into `out` (up to `room`) in number order, skipping the gaps; returns how many.
    uint32_t release_skipping_gaps(PacketDesc* out, uint32_t room) {
        uint32_t n = 0;
        for (uint32_t k = 0; k <= mask_ && n < room; ++k, ++next_) {
            Slot& s = slots_[next_ & mask_];
            if (!s.full) continue;
            s.full = false;
            if (s.d.mbuf != nullptr) out[n++] = s.d;
        }
        return n;
    }

    bool empty() const {
        for (const Slot& s : slots_)
            if (s.full) return false;
        return true;
    }

private:
    struct Slot {
        PacketDesc d{};
        bool full = false;
    };
    std::vector<Slot> slots_;
    uint32_t mask_ = 0;
    uint32_t next_ = 0;
};

}  // namespace tp
