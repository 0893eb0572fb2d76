#include "framework/capture/preload_budget.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_stream.hpp"

namespace tp {

namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kStreamBufferMax = 32 * kMiB;

uint64_t meminfo_available() {
    std::ifstream in("/proc/meminfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("MemAvailable:", 0) == 0) {
            std::istringstream f(line.substr(13));
            uint64_t kb = 0;
            if (f >> kb) return kb * 1024;
        }
    return std::numeric_limits<uint64_t>::max();
}

// A number in a cgroup v2 file, or nullopt for "max" or a missing file.
bool read_cgroup_value(const char* path, uint64_t& value) {
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") return false;
    try {
        value = std::stoull(text);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

uint64_t cgroup_headroom() {
    uint64_t max = 0, current = 0;
    if (!read_cgroup_value("/sys/fs/cgroup/memory.max", max)) return std::numeric_limits<uint64_t>::max();
    if (!read_cgroup_value("/sys/fs/cgroup/memory.current", current)) current = 0;
    return max > current ? max - current : 0;
}

uint64_t address_space_limit() {
    rlimit r{};
    if (::getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return std::numeric_limits<uint64_t>::max();
    return r.rlim_cur;
}

uint64_t file_size(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
}

uint64_t stream_memory(uint64_t budget) {
    CaptureStreamSpec s;
    s.buffer_bytes = stream_buffer_bytes(budget);
    return MbufPool::footprint(CaptureStream::pool_spec(s));
}

}  // namespace

uint64_t default_preload_budget() {
    static const uint64_t budget = std::min({meminfo_available(), cgroup_headroom(), address_space_limit()}) / 2;
    return budget;
}

uint64_t stream_buffer_bytes(uint64_t budget) { return std::min(budget, kStreamBufferMax); }

ReplayPlan plan_replay(const std::string& mode, uint64_t preload_mb, const std::string& path,
                       const Location& named_at) {
    ReplayPlan plan;
    plan.budget = preload_mb != 0 ? preload_mb * kMiB : default_preload_budget();
    if (mode == "false") {
        plan.preload = false;
    } else if (mode == "true") {
        plan.preload = true;
    } else {
        // Templates hold every frame byte plus a few hundred bytes per record: a file larger
        // than the budget cannot fit, and is not read to find out.
        plan.preload = file_size(path) <= plan.budget &&
                       CaptureFile::memory_needed(path, named_at) <= plan.budget;
    }
    plan.memory = plan.preload ? CaptureFile::memory_needed(path, named_at) : stream_memory(plan.budget);
    return plan;
}

}  // namespace tp
