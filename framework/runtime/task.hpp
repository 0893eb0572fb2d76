// Task: what a tile's thread polls. One virtual call per poll (per burst at most), never per
// packet. poll() must not block; it returns true when it moved work or reached its end.
#pragma once

#include <cstdint>

namespace tp {

class Task {
public:
    virtual ~Task() = default;
    virtual bool poll() = 0;
    virtual bool done() const = 0;

    // TSC cycles spent in polls that moved work, counted by the thread polling this task
    // (its only writer) and read after that thread was joined.
    uint64_t busy_cycles() const { return busy_cycles_; }
    void add_busy_cycles(uint64_t c) { busy_cycles_ += c; }

private:
    uint64_t busy_cycles_ = 0;
};

}  // namespace tp
