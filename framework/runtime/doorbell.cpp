#include "framework/runtime/doorbell.hpp"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tp {

namespace {
long futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}
}  // namespace

namespace {
long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

// Registration once per process; false when the kernel lacks private expedited membarrier.
bool membarrier_ready() {
    static const bool ready = [] {
        const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
        if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
        return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    }();
    return ready;
}
}  // namespace

std::atomic<bool> Doorbell::light_failed_{false};

bool Doorbell::make_light() {
    // A first barrier now: a kernel that registers but then refuses is found before the
    // threads start, and the doorbell simply stays an ordinary one.
    light_ = membarrier_ready() && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
    return light_;
}

void Doorbell::heavy_barrier() {
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    // It worked in make_light(); failing now would leave the ringers' stores unordered. From
    // here on every ring_light() fences as ring() does (a ringer that skipped its fence just
    // before this costs at most one park timeout), and this side fences too.
    if (!light_failed_.exchange(true, std::memory_order_relaxed))  // relaxed: a one-way flag
        std::fprintf(stderr, "tilepipe: warning: membarrier(PRIVATE_EXPEDITED) failed (%s): fence-free doorbells "
                             "fall back to fences\n", std::strerror(errno));
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

void Doorbell::park(std::chrono::microseconds timeout) {
    // relaxed: see retry_soon()
    const bool retry = retry_soon_.exchange(false, std::memory_order_relaxed);
    if (retry && timeout > kRetryNap) timeout = kRetryNap;
    timespec ts{static_cast<time_t>(timeout.count() / 1000000),
                static_cast<long>((timeout.count() % 1000000) * 1000)};
    // Sleeps only while the flag still reads 1: a wake that came first makes this return at once.
    if (futex(&parked_, FUTEX_WAIT_PRIVATE, 1, &ts) != 0 && errno == ETIMEDOUT)
        (retry ? retry_naps_ : park_timeouts_).fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
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
