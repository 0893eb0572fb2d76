#include "framework/runtime/wait_policy.hpp"

#include <sched.h>
#include <time.h>

namespace tp {

void yield_cpu() { sched_yield(); }

void nap(std::chrono::microseconds d) {
    timespec ts{static_cast<time_t>(d.count() / 1000000), static_cast<long>((d.count() % 1000000) * 1000)};
    nanosleep(&ts, nullptr);
}

}  // namespace tp
