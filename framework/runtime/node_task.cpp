#include "framework/runtime/node_task.hpp"

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include "framework/runtime/not_std_exception.hpp"
#include "framework/runtime/packet_trace.hpp"
#include "framework/runtime/sequence_field.hpp"
#include "framework/runtime/stage_chain.hpp"
#include "framework/runtime/stop_request.hpp"

namespace tp {

namespace {
// The output for a flow hash among `w`, without a division: the high half of hash x w.
inline uint32_t pick(uint32_t hash, uint32_t w) {
    return static_cast<uint32_t>((uint64_t(hash) * w) >> 32);
}
}  // namespace

NodeTask::NodeTask(NodeTaskSpec spec) : s_(std::move(spec)) {
    is_source_ = !s_.chain.empty() && s_.chain.front()->kind() == StageKind::Source;
    ends_in_sink_ = !s_.chain.empty() && s_.chain.back()->kind() == StageKind::Sink;
    out_.resize(s_.outputs.size());
    if (s_.dispatch == Dispatch::Branch) edges_ = std::vector<EdgeCount>(s_.outputs.size());
    out_at_.assign(s_.outputs.size(), 0);
    if (s_.stamp_sequence || s_.report_drops || s_.reorder_window > 0) seq_offset_ = sequence_field_offset();
    if (s_.reorder_window > 0) window_ = std::make_unique<ReorderWindow>(s_.reorder_window);
    // Unordered, a dispatcher passes over a worker that has not taken what it was given, so
    // one slow or credit-starved worker does not stall the others. Ordered farms keep strict
    // turns: the collector's window could not hold what the others return meanwhile.
    pass_over_ = !s_.stamp_sequence && s_.outputs.size() > 1 &&
                 (s_.dispatch == Dispatch::RoundRobin || s_.dispatch == Dispatch::FlowHash);
    for (auto* in : s_.inputs) {
        const bool seen = std::any_of(polled_.begin(), polled_.end(),
                                      [in](const auto* p) { return p->receive_side() == in->receive_side(); });
        if (!seen) polled_.push_back(in);
    }
    if (s_.latency.on()) {
        if (is_source_) entry_stamp_.emplace(s_.latency.every);
        if (ends_in_sink_) sink_latency_ = std::make_unique<SinkLatency>();
        if (s_.latency.residence()) residence_ = std::make_unique<NodeResidence>();
    }
}

bool NodeTask::pending() const {
    if (any_.n != 0) return true;
    for (const Staged& b : out_)
        if (b.n != 0) return true;
    return false;
}

bool NodeTask::flush() {
    bool moved = false;
    for (size_t o = 0; o < out_.size(); ++o) {
        Staged& b = out_[o];
        if (b.n == 0) continue;
        const uint32_t sent = s_.outputs[o]->try_send_burst(b.d + out_at_[o], b.n - out_at_[o]);
        out_at_[o] = static_cast<uint16_t>(out_at_[o] + sent);
        moved |= sent > 0;
        if (out_at_[o] == b.n) {
            b.n = out_at_[o] = 0;
        } else if (sent > 0 && pass_over_) {
            // What is left moves to the front, so the staging's room is what is really free
            // (a dispatcher passing over this output keeps appending to it).
            std::copy(b.d + out_at_[o], b.d + b.n, b.d);
            b.n = static_cast<uint16_t>(b.n - out_at_[o]);
            out_at_[o] = 0;
        }
    }
    // on_demand: whatever is left goes to any output with room, starting after the last one.
    const size_t w = s_.outputs.size();
    for (size_t k = 0; k < w && any_.n != 0; ++k) {
        const size_t o = (next_output_ + k) % w;
        const uint32_t sent = s_.outputs[o]->try_send_burst(any_.d + any_at_, any_.n - any_at_);
        any_at_ = static_cast<uint16_t>(any_at_ + sent);
        moved |= sent > 0;
        if (sent > 0) next_output_ = (o + 1) % w;
        if (any_at_ == any_.n) any_.n = any_at_ = 0;
    }
    return moved;
}

bool NodeTask::blocked() const {
    if (!pass_over_) return pending();
    if (s_.dispatch == Dispatch::FlowHash) return !room_for_a_burst();
    for (const Staged& b : out_)  // round robin: one output with room is enough
        if (b.n + kBurstMax <= kGatherBursts * kBurstMax) return false;
    return true;
}

bool NodeTask::room_for_a_burst() const {
    for (const Staged& b : out_)
        if (b.n + kBurstMax > kGatherBursts * kBurstMax) return false;
    return true;
}

void NodeTask::stage_for_outputs(const Burst& b) {
    if (b.n == 0) return;
    auto append = [&b](Staged& to) {
        std::copy(b.d, b.d + b.n, to.d + to.n);
        to.n = static_cast<uint16_t>(to.n + b.n);
    };
    switch (s_.dispatch) {
        case Dispatch::Single:
            append(out_[0]);
            break;
        case Dispatch::RoundRobin: {
            size_t o = next_output_;
            if (pass_over_) o = next_round_robin();
            append(out_[o]);
            next_output_ = (o + 1) % out_.size();
            break;
        }
        case Dispatch::OnDemand:
            any_ = b;
            break;
        case Dispatch::Branch:
            if (s_.replicator != nullptr) stage_copies(b);
            else stage_branches(b);
            break;
        case Dispatch::FlowHash: {
            const auto w = static_cast<uint32_t>(out_.size());
            for (const PacketDesc& d : b) {
                Staged& to = out_[pick(d.flow_hash, w)];
                to.d[to.n++] = d;
            }
            break;
        }
    }
}

void NodeTask::stage_branches(const Burst& b) {
    // Nothing is staged when a burst is taken (blocked() waits for every output to empty), so
    // each output's staging has room for a whole burst.
    const uint8_t* out = StageRuntime::outputs(*s_.chain.back());
    const auto& map = s_.branch_outputs;
    const uint8_t first = out[0];
    uint16_t same = 1;
    while (same < b.n && out[same] == first) ++same;
    if (same == b.n) {  // the fast path: the burst moves whole
        if (first >= map.size()) throw std::logic_error("a stage chose output " + std::to_string(first) + " of " + std::to_string(map.size()));
        const uint16_t o = map[first];
        Staged& to = out_[o];
        std::copy(b.d, b.d + b.n, to.d);
        to.n = b.n;
        edges_[o].packets.add(b.n);
        edges_[o].bytes.add(burst_bytes(b));
        return;
    }
    for (uint16_t j = 0; j < b.n; ++j)  // checked first: a bad index leaves the burst in hand
        if (out[j] >= map.size()) throw std::logic_error("a stage chose output " + std::to_string(out[j]) + " of " + std::to_string(map.size()));
    for (uint16_t j = 0; j < b.n; ++j) {
        Staged& to = out_[map[out[j]]];
        to.d[to.n++] = b.d[j];
    }
    // Every staging was empty: what each holds now is what this burst sent it.
    for (size_t o = 0; o < out_.size(); ++o)
        if (out_[o].n != 0) count_edge(o);
}

void NodeTask::count_edge(size_t o) {
    const Staged& to = out_[o];
    uint64_t bytes = 0;
    for (uint16_t j = 0; j < to.n; ++j) bytes += to.d[j].length != PacketDesc::kLengthSaturated ? to.d[j].length : frame_length(to.d[j]);
    edges_[o].packets.add(to.n);
    edges_[o].bytes.add(bytes);
}

void NodeTask::stage_copies(const Burst& b) {
    const auto& map = s_.branch_outputs;  // as in stage_branches, every staging is empty
    for (size_t k = 0; k < map.size(); ++k) {
        Staged& to = out_[map[k]];
        if (k == 0) {
            std::copy(b.d, b.d + b.n, to.d);
            to.n = b.n;
        } else {
            to.n = s_.replicator->replicate(b, to.d);
        }
        if (to.n != 0) count_edge(map[k]);
    }
}

namespace {
void saturate_lengths(Burst& b) {
    for (PacketDesc& d : b)
        if (d.mbuf != nullptr) d.length = PacketDesc::kLengthSaturated;  // holes keep theirs
}
}  // namespace

void NodeTask::process(Burst& b, size_t from) {
    taken_total_ += b.n;
    if (s_.own_pool && from == 0) saturate_lengths(b);  // simple for the first pool, not this node's
    if (s_.report_drops) run_chain_reporting_drops(b, from);
    else run_chain(b, from);
    if (residence_) residence_->handed_on(b, taken_at_, taken_, rte_rdtsc());
    if (s_.stamp_sequence)
        for (PacketDesc& d : b) packet_sequence(d.mbuf, seq_offset_) = next_sequence_++;
    if (s_.chain.empty()) count_passed(b.n, burst_bytes(b));  // stages count their own
    if (s_.own_pool) saturate_lengths(b);
    if (!s_.outputs.empty()) stage_for_outputs(b);
}

size_t NodeTask::next_round_robin() const {
    // The turn's output when it has sent all it was given; else the next one that has, else
    // the next with room (blocked() made sure there is one): a full worker is passed over.
    const size_t w = out_.size();
    for (size_t k = 0; k < w; ++k)
        if (const size_t o = (next_output_ + k) % w; out_[o].n == 0) return o;
    for (size_t k = 0; k < w; ++k)
        if (const size_t o = (next_output_ + k) % w; out_[o].n + kBurstMax <= kGatherBursts * kBurstMax) return o;
    return next_output_;
}

bool NodeTask::out_of_credit() {
    SequenceCredit* c = s_.numbering;
    if (c == nullptr) return false;
    // A poll numbers one burst at most (on demand takes one per poll).
    const uint32_t limit = c->allowance - kBurstMax;
    if (next_sequence_ - numbering_seen_ > limit)
        numbering_seen_ = c->released.load(std::memory_order_relaxed);  // relaxed: see SequenceCredit
    // Stopping (a signal, a failed tile): what is upstream drains on, or the stop could wait
    // for a worker that will never answer (make_task doubles the collector's window for it).
    const bool held = next_sequence_ - numbering_seen_ > limit && !stop_requested();
    // Said for the collector: its fence after `released` pairs with this thread's
    // prepare_park fence, after which the scheduler polls this task again (SequenceCredit).
    set_held(held);
    return held;
}

void NodeTask::set_held(bool held) {
    if (held == numbering_held_) return;
    numbering_held_ = held;
    s_.numbering->held.store(held, std::memory_order_relaxed);  // relaxed: see SequenceCredit
}

void NodeTask::give_credit() {
    SequenceCredit* c = s_.releasing;
    if (c == nullptr || window_->next() == releasing_at_) return;  // nothing released: no fence
    releasing_at_ = window_->next();
    c->released.store(releasing_at_, std::memory_order_relaxed);  // relaxed: see SequenceCredit
    if (Doorbell* b = c->dispatcher_bell) {
        std::atomic_thread_fence(std::memory_order_seq_cst);  // `released` before the look at `held`
        if (c->held.load(std::memory_order_relaxed)) b->ring_fenced();
    }
}

bool NodeTask::inputs_exhausted() {
    for (auto* in : s_.inputs)
        if (!in->closed()) return false;
    return true;
}

bool NodeTask::take(Burst& b) {
    b.n = 0;
    if (window_) {  // in-order packets already waiting go first
        b.n = static_cast<uint16_t>(window_->release(b.d, kBurstMax));
        give_credit();  // holes it skipped count too, even when it hands nothing on
        if (b.n != 0) return true;
    }
    const size_t k = polled_.size();
    for (size_t i = 0; i < k; ++i) {
        const size_t at = (next_input_ + i) % k;
        const uint32_t n = polled_[at]->try_recv_burst(b.d, kBurstMax);
        if (n == 0) continue;
        next_input_ = (at + 1) % k;
        b.n = static_cast<uint16_t>(n);
        if (s_.prefetch_burst) prefetch_burst(b);
        if (!window_) return true;
        // From the end, so that b.n always counts what the window does not hold yet (what a
        // failed insert leaves in hand).
        while (b.n != 0) {
            const PacketDesc& d = b.d[b.n - 1];
            window_->insert(d.mbuf != nullptr ? packet_sequence(d.mbuf, seq_offset_) : d.flow_hash, d);
            --b.n;
        }
        b.n = static_cast<uint16_t>(window_->release(b.d, kBurstMax));
        give_credit();
        return true;  // something was received even if nothing is in order yet
    }
    return false;
}

// As DPDK's examples prefetch a burst they received: on separate cores each mbuf's header and
// first data line were last written by the tile before, and a stage's own prefetch of the next
// packet or two overlaps only a couple of those transfers; here the whole burst's are in flight
// while the chain works through its first packets. The data line is found without reading the
// header (that load would wait for the very transfer being started): a packet that does not
// start at the default headroom costs one useless prefetch. Holes (no mbuf) are skipped.
void NodeTask::prefetch_burst(const Burst& b) const {
    for (uint16_t i = 0; i < b.n; ++i)
        if (const rte_mbuf* m = b.d[i].mbuf) {
            rte_prefetch0(m);
            rte_prefetch0(RTE_PTR_ADD(m, s_.prefetch_data_at));
        }
}

void NodeTask::run_chain(Burst& b, size_t from) {
    run_stage_chain(std::span<Stage* const>(s_.chain).subspan(from), b, sink_latency_.get(), s_.trace, from);
}

void NodeTask::run_chain_reporting_drops(Burst& b, size_t from) {
    // Remember the numbers in hand; stages keep survivors in order, so a merge walk finds the
    // numbers they dropped, which leave as holes for the collector. Holes from an earlier tile
    // of a pipeline worker (no mbuf, the number in flow_hash) pass through in place.
    uint32_t seqs[kBurstMax];
    bool hole[kBurstMax];
    const uint16_t n = b.n;
    Burst& kept = kept_;
    kept.n = 0;
    for (uint16_t j = 0; j < n; ++j) {
        const PacketDesc& d = b.d[j];
        hole[j] = d.mbuf == nullptr;
        seqs[j] = hole[j] ? d.flow_hash : packet_sequence(d.mbuf, seq_offset_);
        if (!hole[j]) kept.d[kept.n++] = d;
    }
    b.n = 0;  // the chain holds the packets now (kept_), b only the numbers
    if (kept.n != 0) run_chain(kept, from);
    uint16_t k = 0;
    for (uint16_t j = 0; j < n; ++j) {
        if (!hole[j] && k < kept.n && packet_sequence(kept.d[k].mbuf, seq_offset_) == seqs[j]) b.d[b.n++] = kept.d[k++];
        else b.d[b.n++] = PacketDesc{nullptr, seqs[j], 0, 0, 0};
    }
    kept.n = 0;
}

void NodeTask::took(const Burst& b) {
    taken_at_ = rte_rdtsc();
    taken_ = b.n;
    residence_->taken(b, taken_at_);
}

void NodeTask::close_stages() {
    // Counted before the call: a close() that throws is not repeated by the failure path.
    while (closed_ < s_.chain.size()) s_.chain[closed_++]->close();
}

void NodeTask::finish() {
    close_stages();
    for (auto* out : s_.outputs) out->close();
    done_ = true;
}

void NodeTask::give_back_held() {
    for (const PacketDesc& d : hand_) drop_after_failure(d);
    for (const PacketDesc& d : kept_) drop_after_failure(d);
    hand_.n = kept_.n = 0;
    for (size_t o = 0; o < out_.size(); ++o) {
        for (uint16_t i = out_at_[o]; i < out_[o].n; ++i) drop_after_failure(out_[o].d[i]);
        out_[o].n = out_at_[o] = 0;
    }
    for (uint16_t i = any_at_; i < any_.n; ++i) drop_after_failure(any_.d[i]);
    any_.n = any_at_ = 0;
    if (window_) {
        PacketDesc d[kBurstMax];
        while (uint32_t n = window_->release_skipping_gaps(d, kBurstMax))
            for (uint32_t i = 0; i < n; ++i) drop_after_failure(d[i]);
    }
}

bool NodeTask::poll_failed() {
    if (done_) return false;
    if (!abandoned_) {
        abandoned_ = true;
        give_back_held();
        // The other stages still end their work (flush files, release ports); a second error
        // there is logged, the first one is the node's failure.
        while (closed_ < s_.chain.size()) {
            try {
                close_stages();
            } catch (const std::exception& e) {
                spdlog::error("closing a stage after the failure: {}", e.what());
            } catch (...) {
                spdlog::error("closing a stage after the failure: {}", kNotStdException);
            }
        }
        for (auto* out : s_.outputs) out->close();
        return true;
    }
    // Upstream still sends until the stop request reaches its sources: free and count it all.
    const auto drain = [this] {
        bool got = false;
        for (auto* in : polled_) {
            hand_.n = static_cast<uint16_t>(in->try_recv_burst(hand_.d, kBurstMax));
            got |= hand_.n != 0;
            for (const PacketDesc& d : hand_) drop_after_failure(d);
            hand_.n = 0;
        }
        return got;
    };
    if (drain()) return true;
    // closed() is read with acquire after each sender's last send: one more look sees it all.
    if (!inputs_exhausted() || drain()) return false;
    done_ = true;
    return true;
}

bool NodeTask::poll() {
    if (done_) return false;
    if (s_.stall && s_.stall->holds(taken_total_)) return false;  // held up on purpose: no work
    bool progress = false;
    if (pending()) {
        progress = flush();
        if (blocked()) return progress;  // downstream still full: back-pressure
    }
    if (out_of_credit()) return progress;  // the collector waits for a slow worker (SequenceCredit)
    Burst& b = hand_;
    b.n = 0;
    size_t first = 0;
    // The end travels after the last packet: with outputs passed over, some may still hold
    // packets here, and the outputs close only once those have gone.
    const auto end = [this, progress] {
        if (pending()) return progress;
        finish();
        return true;
    };
    if (is_source_) {
        Stage& src = *s_.chain.front();
        if (source_done_ || stop_requested()) return end();
        const uint64_t t0 = rte_rdtsc();
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done && b.n == 0) {
            source_done_ = true;
            return end();
        }
        // Cycles count only calls that emitted: a paced or idle source's empty calls are
        // waiting, not work, and would inflate its cycles per packet.
        if (b.n == 0) return progress;
        const uint64_t t1 = rte_rdtsc();
        src.stats().cycles.add(t1 - t0);
        if (src.stats().first_tsc.get() == 0) src.stats().first_tsc.set(t0);
        src.stats().last_tsc.set(t1);
        if (entry_stamp_) entry_stamp_->stamp(b, t1);
        if (s_.trace != nullptr && s_.trace->live()) s_.trace->emitted(b, t1);
        taken_at_ = t1;
        taken_ = b.n;
        src.stats().out.add(b.n);
        src.stats().bytes_out.add(burst_bytes(b));
        src.stats().bursts.inc();
        first = 1;
    } else if (!take(b)) {
        // closed() is read with acquire after each sender's last send: one more look sees
        // everything that was sent.
        if (!inputs_exhausted() || take(b)) {
            if (b.n == 0) return progress;
        } else if (window_ && (b.n = static_cast<uint16_t>(window_->release_skipping_gaps(b.d, kBurstMax))) != 0) {
            // numbers a failed worker never returned: the rest goes on in order
        } else {
            return end();
        }
    }

    if (residence_ && !is_source_) took(b);
    process(b, first);
    b.n = 0;  // staged for the outputs (or consumed by a sink)
    if (s_.dispatch == Dispatch::FlowHash && !is_source_)
        for (uint16_t k = 1; k < kGatherBursts && room_for_a_burst() && take(b); ++k) {
            if (residence_) took(b);
            process(b, 0);
            b.n = 0;
        }
    flush();
    return true;
}

}  // namespace tp
