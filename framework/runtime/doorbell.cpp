#include "framework/runtime/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace tp {

namespace {
long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}
}  // namespace

void Doorbell::park(std::chrono::microseconds timeout) {
    timespec ts{static_cast<time_t>(timeout.count() / 1000000),
                static_cast<long>((timeout.count() % 1000000) * 1000)};
    // Sleeps only while the flag still reads 1: a wake that came first makes this return at once.
    futex(&parked_, FUTEX_WAIT_PRIVATE, 1, &ts);
    // relaxed: the sleeper re-polls its inputs next, and the producers' data was ordered by
    // their own fence before they read the flag; this store only ends the announcement.
    parked_.store(0, std::memory_order_relaxed);
}

void Doorbell::wake() {
    // exchange: only one of several producers pays for the syscall. relaxed: the caller's
    // seq_cst fence already ordered its data before this; the futex syscall itself is a full
    // barrier between the waker and the woken thread.
    if (parked_.exchange(0, std::memory_order_relaxed) != 0) {
        wakeups_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
        futex(&parked_, FUTEX_WAKE_PRIVATE, 1, nullptr);
    }
}

}  // namespace tp
