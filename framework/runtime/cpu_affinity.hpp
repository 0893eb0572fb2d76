// CPU affinity of OS threads: which CPUs this process may use, and pinning a thread to one.
#pragma once

#include <vector>

namespace tp {

// CPUs in this process's affinity mask, ascending.
std::vector<int> allowed_cpus();

// Pins the calling thread to `cpu`; returns false (and leaves it floating) if the OS refused.
bool pin_current_thread(int cpu);

// Names the calling thread (visible in top/perf); truncated to 15 characters.
void name_current_thread(const char* name);

}  // namespace tp
