// tp::PacketAccelerator (include/tilepipe/packet_accelerator.hpp): the app built and opened on
// the caller's thread, with the `offload` source and `results` sink bound to this accelerator's
// PacketLink (framework/accel/packet_link.hpp), then run on a thread of its own by the same
// runner Runtime::run uses (framework/builder/run_steps.hpp).
//
// Memory orders: the run's thread writes `report`, `failure` and `run_error` before its release
// store of `ended`; the caller reads them after an acquire load of `ended` that saw true (or
// after join()). Packets cross the two channels with the ring's own release/acquire pairs.
#include "tilepipe/packet_accelerator.hpp"

#include <rte_mbuf.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <string>
#include <thread>

#include "descriptors/mbuf_pool.hpp"
#include "framework/accel/packet_link.hpp"
#include "framework/builder/app_state.hpp"
#include "framework/builder/run_steps.hpp"
#include "framework/runtime/not_std_exception.hpp"

namespace tp {

struct PacketAcceleratorState {
    PacketLink link;
    PreparedRun run;
    std::thread thread;
    // Written by the run's thread before `ended` (release).
    RunReport report;
    std::exception_ptr run_error;
    std::string failure;
    std::atomic<bool> ended{false};
    // The caller's thread only.
    std::deque<PacketDesc> kept;  // results taken off the channel while an offload waited
    uint64_t offloaded = 0;
    uint64_t taken = 0;
    bool eos = false;
    bool waited = false;

    bool has_ended() const { return ended.load(std::memory_order_acquire); }
    void throw_if_failed() const {
        if (has_ended() && !failure.empty()) throw PacketAcceleratorError(failure);
    }
    // Results the sink handed over, moved to the caller's side so the sink never waits on a
    // caller that is itself waiting to offload.
    void keep_results() {
        PacketDesc d[kBurstMax];
        uint32_t n;
        while ((n = link.to_caller->try_recv_burst(d, kBurstMax)) != 0) kept.insert(kept.end(), d, d + n);
    }
    bool take(PacketDesc& d) {
        if (kept.empty()) return link.to_caller->try_recv(d);
        d = kept.front();
        kept.pop_front();
        return true;
    }
    void free_unread() {
        PacketDesc d;
        while (take(d)) free_packet(d.mbuf);
    }
    void finish_stream() {
        if (eos) return;
        eos = true;
        link.to_app->close();
    }
    // Waits for the run's end, freeing results nobody will read so the sink never blocks it.
    void drain_and_join() {
        finish_stream();
        unsigned misses = 0;
        while (!has_ended()) {
            free_unread();
            backoff(misses);
        }
        thread.join();
        free_unread();
    }
    static void backoff(unsigned& misses) {
        if (++misses < 64) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    PacketDesc desc_of(rte_mbuf* m) const {
        // A simple mbuf may go straight back to the pool at a sink (see PacketDesc).
        const bool simple = m->nb_segs == 1 && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 && m->pool == link.pool;
        return PacketDesc{m, 0, simple ? saturate_length(m->pkt_len) : PacketDesc::kLengthSaturated, 0, 0};
    }
    void check_offload() const {
        if (eos) throw PacketAcceleratorError("offload after end_of_stream()");
        throw_if_failed();
        if (has_ended()) throw PacketAcceleratorError("offload after the app ended (it was stopped)");
    }
};

PacketAccelerator::PacketAccelerator(const AppBuilder& app, Runtime& runtime)
    : state_(std::make_unique<PacketAcceleratorState>()) {
    PacketAcceleratorState& s = *state_;
    {
        // The stages find this accelerator's link while the app is validated and opened.
        std::lock_guard<std::mutex> lock(bind_mutex());
        set_bound_link(&s.link);
        struct Unbind {
            ~Unbind() { set_bound_link(nullptr); }
        } unbind;
        s.run = prepare_run(*app.state_, runtime.options_, RunSettings{});
    }
    const std::string place = "app '" + s.run.app.name + "'";
    if (!s.link.to_app)
        throw AppError(place, "a packet accelerator's app starts with the `offload` source (the program feeds it)");
    if (!s.link.to_caller)
        throw AppError(place, "a packet accelerator's app ends with the `results` sink (the program reads it)");
    s.thread = std::thread([&s] {
        try {
            s.report = run_prepared(s.run, RunSettings{});
            for (const FailureReport& f : s.report.failures)
                s.failure += (s.failure.empty() ? "the app failed: node '" : "; node '") + f.node + "': " + f.error;
        } catch (const std::exception& e) {
            s.run_error = std::current_exception();
            s.failure = std::string("the app failed: ") + e.what();
        } catch (...) {
            s.run_error = std::current_exception();
            s.failure = std::string("the app failed: ") + kNotStdException;
        }
        s.ended.store(true, std::memory_order_release);  // after report, failure, run_error
    });
}

PacketAccelerator::~PacketAccelerator() {
    PacketAcceleratorState& s = *state_;
    if (s.thread.joinable()) s.drain_and_join();
    s.free_unread();
    // Packets offloaded but never taken by the source (the app stopped early) go back too,
    // before the runner (and its pool) goes.
    PacketDesc d;
    if (s.link.to_app)
        while (s.link.to_app->try_recv(d)) free_packet(d.mbuf);
}

rte_mbuf* PacketAccelerator::alloc() {
    rte_mbuf* m = nullptr;
    return alloc_packets(state_->link.pool, &m, 1) ? m : nullptr;
}

void PacketAccelerator::offload(rte_mbuf* m) {
    PacketAcceleratorState& s = *state_;
    s.check_offload();
    const PacketDesc d = s.desc_of(m);
    unsigned misses = 0;
    while (!s.link.to_app->try_send(d)) {
        s.keep_results();
        s.check_offload();  // a failed or stopped app takes no more
        PacketAcceleratorState::backoff(misses);
    }
    ++s.offloaded;
}

bool PacketAccelerator::try_offload(rte_mbuf* m) {
    PacketAcceleratorState& s = *state_;
    s.check_offload();
    if (!s.link.to_app->try_send(s.desc_of(m))) {
        s.keep_results();
        return false;
    }
    ++s.offloaded;
    return true;
}

void PacketAccelerator::end_of_stream() {
    PacketAcceleratorState& s = *state_;
    if (s.eos) throw PacketAcceleratorError("end_of_stream() called twice");
    s.finish_stream();
}

bool PacketAccelerator::try_get_result(rte_mbuf*& m) {
    PacketAcceleratorState& s = *state_;
    s.throw_if_failed();
    PacketDesc d;
    if (!s.take(d)) return false;
    ++s.taken;
    m = d.mbuf;
    return true;
}

bool PacketAccelerator::get_result(rte_mbuf*& m) {
    PacketAcceleratorState& s = *state_;
    unsigned misses = 0;
    for (;;) {
        s.throw_if_failed();
        // closed() before the receive (acquire): closed and then empty means no result is left.
        const bool closed = s.link.to_caller->closed();
        const bool ended = s.has_ended();
        PacketDesc d;
        if (s.take(d)) {
            ++s.taken;
            m = d.mbuf;
            return true;
        }
        if (closed || ended) {
            // The sink saw the end of stream: wait for the run's end, so a failure is told.
            while (!s.has_ended()) PacketAcceleratorState::backoff(misses);
            s.throw_if_failed();
            return false;
        }
        if (!s.eos && s.taken == s.offloaded)
            throw PacketAcceleratorError("get_result() would wait forever: every offloaded packet was read back "
                                   "and end_of_stream() was not called");
        // Packets a stage dropped never come back: once those the stages count (relaxed
        // counters, so possibly late, never early) and those read make up every one offloaded,
        // nothing is in flight. Asked only once the wait has gone on (a view costs a report).
        if (!s.eos && misses >= 64 && misses % 64 == 0) {
            const uint64_t dropped = s.run.runner->live_view().report.drops;
            if (s.taken + dropped >= s.offloaded)
                throw PacketAcceleratorError("get_result() would wait forever: every offloaded packet was read back "
                                             "or dropped by a stage (" + std::to_string(dropped) +
                                             " dropped) and end_of_stream() was not called");
        }
        PacketAcceleratorState::backoff(misses);
    }
}

Report PacketAccelerator::wait() {
    PacketAcceleratorState& s = *state_;
    if (s.waited) throw PacketAcceleratorError("wait() called twice");
    s.waited = true;
    s.drain_and_join();
    if (s.run_error) std::rethrow_exception(s.run_error);
    RunReport& r = s.report;
    // Offloaded packets the source never took (a stage failed, or the app was stopped): freed
    // and counted as the source's drops, so every offloaded packet is accounted.
    uint64_t left = 0;
    PacketDesc d;
    while (s.link.to_app->try_recv(d)) {
        free_packet(d.mbuf);
        ++left;
    }
    if (left != 0) {
        for (StageReport& st : r.stages)
            if (st.stage == "offload") st.drops += left;
        r.packets += left;
        r.drops += left;
        r.unaccounted = int64_t(r.packets) - int64_t(r.delivered) - int64_t(r.drops);
    }
    // The results the caller freed are back now: the pool as it is after them.
    for (size_t i = 0; i < r.pools.size(); ++i) r.pools[i].available = s.run.runner->pools()[i]->available();
    return finish_run(r, s.run.app, RunSettings{});
}

}  // namespace tp
