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

extern "C" void on_signal(int) {
    if (g_signalled.exchange(true, std::memory_order_relaxed)) std::_Exit(130);
    g_stop.store(true, std::memory_order_relaxed);
}
}  // namespace

void request_stop() { g_stop.store(true, std::memory_order_relaxed); }
bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }
void clear_stop_request() {
    g_signalled.store(false, std::memory_order_relaxed);
    g_stop.store(false, std::memory_order_relaxed);
}

void install_stop_signal_handlers() {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
}

}  // namespace tp
