// Whether the `pcap` source preloads a capture or streams it, and the memory that decides.
//
// `preload: auto` preloads when the capture's templates (CaptureFile::memory_needed) fit the
// preload budget, and streams otherwise. The budget is `preload_mb` MiB when given, else half
// of the memory this process can still take when it first asks: the least of MemAvailable
// (/proc/meminfo), the cgroup's memory.max less memory.current, and the address-space limit
// (`ulimit -v`). It is read once per process, so the EAL memory sized before the run and the
// source opened later make the same choice. A capture file larger than the budget is streamed
// without reading it first (its templates take at least its size).
#pragma once

#include <cstdint>
#include <string>

#include "framework/config/location.hpp"

namespace tp {

struct ReplayPlan {
    bool preload = true;
    uint64_t memory = 0;  // EAL memory the replay takes: templates, or the stream's buffers
    uint64_t budget = 0;  // the preload budget it was decided against
};

// `mode` is the `preload` parameter ("auto", "true", "false"); `preload_mb` 0 = the default
// budget. Throws what reading the capture would (LocatedError) when it must be surveyed.
ReplayPlan plan_replay(const std::string& mode, uint64_t preload_mb, const std::string& path,
                       const Location& named_at);

// The buffers a streamed capture may take under budget `budget` (at most 32 MiB).
uint64_t stream_buffer_bytes(uint64_t budget);

// Half of the memory the process can still take (see above), once per process.
uint64_t default_preload_budget();

}  // namespace tp
