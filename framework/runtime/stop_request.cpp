#include "framework/runtime/stop_request.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>

namespace tp {

namespace {
// Lock-free and signal-safe; relaxed is enough: the flag carries no data, and a source
// seeing it one poll late only emits one burst more.
std::atomic<bool> g_stop{false};
// Signals apart from other stop requests (a failed tile's): it takes a second Ctrl-C, not the
// first after a failure, to exit at once. Relaxed for the same reason as g_stop.
std::atomic<bool> g_signalled{false};
// The first signal's number, for the report and the exit status (130 after SIGINT).
std::atomic<int> g_signal{0};

extern "C" void on_signal(int signo) {
    if (g_signalled.exchange(true, std::memory_order_relaxed)) std::_Exit(128 + signo);
    g_signal.store(signo, std::memory_order_relaxed);
    g_stop.store(true, std::memory_order_relaxed);
}
}  // namespace

void request_stop() { g_stop.store(true, std::memory_order_relaxed); }
bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }
int stop_signal() { return g_signal.load(std::memory_order_relaxed); }
void clear_stop_request() {
    g_signalled.store(false, std::memory_order_relaxed);
    g_signal.store(0, std::memory_order_relaxed);
    g_stop.store(false, std::memory_order_relaxed);
}

void install_stop_signal_handlers() {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
}

}  // namespace tp
