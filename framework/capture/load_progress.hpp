// LoadProgress: what a user sees while a large capture is read before a run starts.
//
// Quiet for the first moments (small captures load silently); after that, on stderr, one line
// with the share of the file read, redrawn in place when stderr is a terminal, or a new line
// every few seconds when it is not (a log keeps a trace without a flood of carriage returns).
// A line that was drawn is completed by finish() or the destructor. `set_enabled(false)`
// silences every load in the process (`tilepipe run --quiet`).
//
// Thread-safety: one object per thread; set_enabled() may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tp {

class LoadProgress {
public:
    // `what` names the work ("loading caps/big.pcap"); `total` is the file's size in bytes
    // (0 when unknown: the line then shows bytes read only).
    LoadProgress(std::string what, uint64_t total);
    ~LoadProgress();
    LoadProgress(const LoadProgress&) = delete;
    LoadProgress& operator=(const LoadProgress&) = delete;

    // `done` bytes of the file read; cheap enough to call every few thousand records.
    void update(uint64_t done);
    // The work is complete: a drawn line ends with the total and the time taken.
    void finish();

    static void set_enabled(bool enabled);

private:
    void draw(uint64_t done, bool last);

    std::string what_;
    uint64_t total_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point next_draw_;
    bool terminal_;
    bool drawn_ = false;
    bool finished_ = false;
};

}  // namespace tp
