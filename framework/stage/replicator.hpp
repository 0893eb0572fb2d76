// Replicator: a stage whose every packet leaves by each of its outputs (`tee`). The runtime
// hands the packets the stage passed on to its first output and asks it for a copy of the
// burst for each other output; the runner finds it by dynamic_cast, as SendsByPort.
#pragma once

#include <cstdint>

#include "descriptors/burst.hpp"

namespace tp {

class Replicator {
public:
    // Copies of the first `b.n` packets of `b` into `copies` (in order, at most b.n); a packet
    // that could not be copied is counted by the stage as a drop and left out. Returns how many.
    virtual uint16_t replicate(const Burst& b, PacketDesc* copies) = 0;
    // Copies made so far (the report adds them to what the sources emitted); read after the
    // join or live (a relaxed counter of the stage's tile).
    virtual uint64_t copies_made() const = 0;

protected:
    ~Replicator() = default;
};

}  // namespace tp
