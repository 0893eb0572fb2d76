#include "framework/metrics/interval_stats.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "framework/metrics/live_json.hpp"

namespace tp {

nlohmann::json interval_json(const RunReport& delta, int interval, double t, const std::vector<int64_t>& queued) {
    nlohmann::json j = to_json(delta);
    // What describes the end of a run has no meaning for an interval of it.
    // What describes the run as a whole (its header, setup time) is in the final report.
    for (const char* end_only : {"unaccounted", "pools", "pools_full", "failures", "header", "setup_s"}) j.erase(end_only);
    j["interval"] = interval;
    j["t"] = t;
    add_queued(j, queued);
    return j;
}

IntervalStats::IntervalStats(LiveSource source, double seconds, std::FILE* out)
    : source_(std::move(source)), seconds_(seconds), out_(out), writer_([this] { loop(); }) {}

IntervalStats::~IntervalStats() { finish(); }

void IntervalStats::loop() {
    // Interval ends are counted on the run's own clock (the view's `seconds`): the writer
    // wakes about every interval and writes every interval that has ended since.
    const auto step = std::chrono::duration<double>(seconds_);
    std::unique_lock<std::mutex> lock(m_);
    while (!stop_) {
        wake_.wait_for(lock, step / 4);
        if (stop_) break;
        const LiveView v = source_();
        if (v.started && v.report.seconds >= (lines_ + 1) * seconds_) write_line(v);
    }
}

void IntervalStats::write_line(const LiveView& now) {
    if (!error_.empty()) return;
    const RunReport delta = report_delta(now.report, last_);
    ++lines_;
    const std::string line = interval_json(delta, lines_, now.report.seconds, now.queued).dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), out_) != line.size() || std::fflush(out_) != 0)
        error_ = std::string("cannot write line ") + std::to_string(lines_) + ": " + std::strerror(errno);
    last_ = now.report;
}

void IntervalStats::finish() {
    {
        std::lock_guard<std::mutex> lock(m_);
        if (stop_) return;
        stop_ = true;
    }
    wake_.notify_all();
    writer_.join();
    const LiveView v = source_();
    if (v.started && v.report.seconds > last_.seconds) write_line(v);
}

}  // namespace tp
