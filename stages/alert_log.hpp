// AlertLog: the JSON-lines file an inspecting stage writes one line to per alert, so that a
// tool (jq, a SIEM) can read what matched without opening a capture.
//
// A line: {"packet":N,"pattern":ID,"text":"...","length":L} plus, for IP packets that `parse`
// typed, "ip":4|6,"src","dst","proto" and, for TCP and UDP, "sport","dport". `packet` is the
// 0-based index of the packet among those the stage instance saw. Writes are buffered (alerts
// are the exception in the traffic, never the per-packet path); the last owner flushes.
// Thread-safety: every stage instance naming the same path (a farm's workers) shares one log
// through open(); write() takes its lock.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

struct rte_mbuf;

namespace tp {

class AlertLog {
public:
    // The log writing `path`, opened (truncated) by the first caller; throws
    // std::runtime_error naming the path and the reason.
    static std::shared_ptr<AlertLog> open(const std::string& path);
    ~AlertLog();
    AlertLog(const AlertLog&) = delete;
    AlertLog& operator=(const AlertLog&) = delete;

    void write(const rte_mbuf* m, uint64_t packet, uint32_t pattern, const std::string& text);
    // Whether every line so far reached the file's buffer without an error.
    bool ok() const;

private:
    explicit AlertLog(FILE* f) : f_(f) {}
    mutable std::mutex lock_;
    FILE* f_;
};

}  // namespace tp
