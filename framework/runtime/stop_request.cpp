#include "framework/runtime/stop_request.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>

namespace tp {

namespace {
// Lock-free and signal-safe; relaxed is enough: the flags carry no data, and a tile seeing
// one a poll late only moves one burst more. What the tiles did is read after they are
// joined, which orders it.
std::atomic<bool> g_stop{false};
std::atomic<bool> g_cut{false};
// Signals apart from other stop requests (a failed tile's): it takes a second Ctrl-C, not the
// first after a failure, to cut the run. Relaxed for the same reason as g_stop.
std::atomic<int> g_signals{0};
// The first signal's number, for the report and the exit status (130 after SIGINT).
std::atomic<int> g_signal{0};
std::atomic<bool> g_cut_on_second{false};

extern "C" void on_signal(int signo) {
    const int n = g_signals.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == 1) {
        g_signal.store(signo, std::memory_order_relaxed);
        g_stop.store(true, std::memory_order_relaxed);
    } else if (n == 2 && g_cut_on_second.load(std::memory_order_relaxed)) {
        g_cut.store(true, std::memory_order_relaxed);
    } else {
        const int first = g_signal.load(std::memory_order_relaxed);
        std::_Exit(128 + (first != 0 ? first : signo));
    }
}
}  // namespace

void request_stop() { g_stop.store(true, std::memory_order_relaxed); }
bool stop_requested() { return g_stop.load(std::memory_order_relaxed); }
int stop_signal() { return g_signal.load(std::memory_order_relaxed); }
bool cut_requested() { return g_cut.load(std::memory_order_relaxed); }
void clear_stop_request() {
    g_signals.store(0, std::memory_order_relaxed);
    g_signal.store(0, std::memory_order_relaxed);
    g_cut.store(false, std::memory_order_relaxed);
    g_stop.store(false, std::memory_order_relaxed);
}

void install_stop_signal_handlers(SecondSignal second) {
    g_cut_on_second.store(second == SecondSignal::CutShort, std::memory_order_relaxed);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
}

}  // namespace tp
