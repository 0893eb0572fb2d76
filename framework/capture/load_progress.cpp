#include "framework/capture/load_progress.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace tp {

namespace {
// Relaxed: a switch read before each load, it orders nothing else.
std::atomic<bool> g_enabled{true};

using Clock = std::chrono::steady_clock;
// Quiet this long: a capture that loads faster needs no progress line.
constexpr auto kQuietFor = std::chrono::milliseconds(700);
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);  // on a terminal
constexpr auto kLineEvery = std::chrono::seconds(2);           // elsewhere
}  // namespace

void LoadProgress::set_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

LoadProgress::LoadProgress(std::string what, uint64_t total)
    : what_(std::move(what)),
      total_(total),
      start_(Clock::now()),
      next_draw_(start_ + kQuietFor),
      terminal_(::isatty(STDERR_FILENO) == 1) {}

LoadProgress::~LoadProgress() {
    // Ended early (an error, a stop request): end the line so the next message starts clean.
    if (drawn_ && !finished_ && terminal_) std::fputc('\n', stderr);
}

void LoadProgress::update(uint64_t done) {
    const Clock::time_point now = Clock::now();
    if (now < next_draw_ || !g_enabled.load(std::memory_order_relaxed)) return;
    next_draw_ = now + (terminal_ ? kRedrawEvery : kLineEvery);
    draw(done, false);
}

void LoadProgress::finish() {
    if (finished_) return;
    finished_ = true;
    if (drawn_) draw(total_, true);
}

void LoadProgress::draw(uint64_t done, bool last) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    char line[96];
    if (total_ > 0)
        std::snprintf(line, sizeof line, "%5.1f%% of %.1f MB, %.1f s", 100.0 * double(done) / double(total_),
                      double(total_) / 1e6, seconds);
    else
        std::snprintf(line, sizeof line, "%.1f MB, %.1f s", double(done) / 1e6, seconds);
    // \033[K clears what a longer earlier line left on the terminal.
    if (terminal_) std::fprintf(stderr, "\r%s: %s%s", what_.c_str(), line, last ? "\033[K\n" : "\033[K");
    else std::fprintf(stderr, "%s: %s\n", what_.c_str(), line);
    std::fflush(stderr);
    drawn_ = true;
}

}  // namespace tp
