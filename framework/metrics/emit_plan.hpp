// EmitPlan: what a source knows in advance about its stream, for the progress line's loop count
// and time left. A source that knows implements PlansEmission; the runner asks it once a second.
#pragma once

#include <cstdint>

namespace tp {

struct EmitPlan {
    uint64_t packets = 0;   // the whole stream; 0 = not known (endless, or until a time)
    uint64_t per_loop = 0;  // a replayed capture's packets per pass; 0 = the source does not loop
    uint64_t loops = 0;     // passes planned; 0 = until stopped
};

class PlansEmission {
public:
    // Fixed once the stage is open: read by another thread while the source runs.
    virtual EmitPlan emit_plan() const = 0;

protected:
    ~PlansEmission() = default;
};

}  // namespace tp
