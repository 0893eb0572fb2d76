// Task: what a tile's thread polls. One virtual call per poll (per burst at most), never per
// packet. poll() must not block; it returns true when it moved work or reached its end.
//
// Failure: an exception out of poll() (a stage's error, a failed invariant) does not end the
// thread. The scheduler records it here, asks the whole run to stop, and from then on calls
// poll_failed() instead of poll(): the task gives back what it held and what still reaches it
// (each packet freed and counted in failure_drops()), ends its outputs, and is done once its
// inputs are, so the rest of the app drains and the report stays exact.
//
// Cut short (a second Ctrl-C: cut_requested()): the threads stop polling, and after the join
// the main thread gives every task the same treatment through poll_cut(): what it held and
// what still reaches it is freed and counted in cut_drops(), and the outputs end, so the run
// ends at once with every packet accounted for.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "descriptors/packet_desc.hpp"

namespace tp {

class Task {
public:
    virtual ~Task() = default;
    virtual bool poll() = 0;
    virtual bool done() const = 0;
    // Called instead of poll() once poll() has thrown; must not throw. The default ends the
    // task at once, which suits a task that holds no packets and no channel ends.
    virtual bool poll_failed();
    // Called instead of poll() once the run is cut short (on one thread, after the tiles
    // joined); must not throw. The default is poll_failed(), whose giving back suits both.
    virtual bool poll_cut() { return poll_failed(); }
    // Done, or ended after a failure: the thread polls it no more.
    bool finished() const { return ended_ || done(); }

    // Work for this task may come now from where no doorbell rings (another process: a link
    // between ranks hears of messages and credits only by looking): while it says so, its idle
    // thread naps (Doorbell::retry_soon, kRetryNap) instead of parking for the park timeout.
    // Read by its own thread only.
    bool waits_unrung() const { return waits_unrung_; }

    // TSC cycles spent in polls that moved work, counted by the thread polling this task (its
    // only writer: a relaxed load and store, a plain add on x86) and read by the report after
    // the join or by live telemetry meanwhile (relaxed: a value a poll old, never torn).
    uint64_t busy_cycles() const { return busy_cycles_.load(std::memory_order_relaxed); }
    void add_busy_cycles(uint64_t c) {
        busy_cycles_.store(busy_cycles_.load(std::memory_order_relaxed) + c, std::memory_order_relaxed);
    }

    // Packets and frame bytes a node without stages (a farm's emitter or collector) passed on,
    // counted by its polling thread and read as busy_cycles() is.
    uint64_t passed_packets() const { return passed_packets_.load(std::memory_order_relaxed); }
    uint64_t passed_bytes() const { return passed_bytes_.load(std::memory_order_relaxed); }

    // Set by the polling thread when poll() threw; read by others only after it was joined.
    void record_failure(std::string what) { failure_ = std::move(what), failed_ = true; }
    bool failed() const { return failed_; }
    const std::string& failure() const { return failure_; }
    // Packets freed by the failure path (in flight in this task when it failed, or arriving after).
    uint64_t failure_drops() const { return failure_drops_; }

    // Set by the main thread after the join when the run is cut short; poll_cut() from then on.
    void mark_cut() { cut_ = true; }
    bool cut() const { return cut_; }
    // Packets freed by the cut (in flight in this task or reaching it after the cut).
    uint64_t cut_drops() const { return cut_drops_; }
    // Failed or cut: the task frees what it holds and what reaches it instead of working.
    bool giving_back() const { return failed_ || cut_; }

protected:
    void set_waits_unrung(bool waits) { waits_unrung_ = waits; }
    void end_after_failure() { ended_ = true; }
    // Frees the packet a failed or cut task gives back and counts it (as a failure's drop, or
    // the cut's); a hole marker (no mbuf) is no packet.
    void drop_after_failure(const PacketDesc& d);
    // Counts, as drop_after_failure does, packets that never became mbufs here (a link
    // between ranks: the bytes of a message in hand).
    void count_failure_drops(uint64_t n) { (failed_ ? failure_drops_ : cut_drops_) += n; }
    void count_passed(uint64_t packets, uint64_t bytes) {
        passed_packets_.store(passed_packets_.load(std::memory_order_relaxed) + packets, std::memory_order_relaxed);
        passed_bytes_.store(passed_bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    }

private:
    std::atomic<uint64_t> busy_cycles_{0};
    std::atomic<uint64_t> passed_packets_{0};
    std::atomic<uint64_t> passed_bytes_{0};
    bool waits_unrung_ = false;
    bool failed_ = false;
    bool ended_ = false;
    std::string failure_;
    uint64_t failure_drops_ = 0;
    bool cut_ = false;
    uint64_t cut_drops_ = 0;
};

}  // namespace tp
