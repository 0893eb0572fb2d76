#include "framework/patterns/packet_map.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "framework/runtime/not_std_exception.hpp"
#include "framework/runtime/stage_chain.hpp"

namespace tp {

MapTaskSlots::MapTaskSlots(uint32_t slots, uint32_t workers) : workers_(workers), slots_(slots) {
    for (Slot& s : slots_) s.shares = std::make_unique<Share[]>(workers);
}

void MapTaskSlots::slice(uint32_t w, uint16_t n, uint16_t& first, uint16_t& count) const {
    first = static_cast<uint16_t>(uint32_t(n) * w / workers_);
    count = static_cast<uint16_t>(uint32_t(n) * (w + 1) / workers_ - first);
}

// ---- emitter ----

MapEmitterTask::MapEmitterTask(MapTaskSlots& slots, std::vector<Channel<PacketDesc>*> inputs,
                               std::vector<Channel<uint64_t>*> to_workers, Channel<uint64_t>* freed)
    : slots_(slots), in_(std::move(inputs)), out_(std::move(to_workers)), freed_(freed) {
    for (uint32_t i = slots.size(); i-- > 0;) free_.push_back(i);
}

bool MapEmitterTask::send_pending() {
    const size_t before = unsent_.size();
    std::erase_if(unsent_, [&](uint32_t o) { return out_[o]->try_send(current_); });
    return unsent_.size() != before;
}


bool MapEmitterTask::discard_inputs() {
    Burst b;
    bool progress = false;
    for (auto* in : in_) {
        b.n = static_cast<uint16_t>(in->try_recv_burst(b.d, kBurstMax));
        for (const PacketDesc& d : b) drop_after_failure(d);
        progress |= b.n != 0;
    }
    if (progress) return true;
    for (auto* in : in_)
        if (!in->closed()) return false;
    for (auto* in : in_)
        if (in->try_recv_burst(b.d, 1) != 0) {  // closed() was seen after the last send
            drop_after_failure(b.d[0]);
            return true;
        }
    for (auto* o : out_) o->close();
    outputs_ended_ = true;
    return true;
}

// Slots come back until the collector closes the link, after the end of the stream and after a
// failure or a cut too: on the app's network a receiver that stops taking may keep some of its
// sender's credits (noc/credit_receiver.hpp), and the collector frees every slot still in
// flight before it ends.
bool MapEmitterTask::take_freed() {
    if (done_) return false;
    uint64_t slot;
    bool took = false;
    while (freed_->try_recv(slot)) {
        free_.push_back(static_cast<uint32_t>(slot));
        took = true;
    }
    if (took || !outputs_ended_ || !freed_->closed()) return took;
    if (freed_->try_recv(slot)) {  // closed() was seen after the collector's last send: a last look
        free_.push_back(static_cast<uint32_t>(slot));
        return true;
    }
    done_ = true;
    return true;
}

bool MapEmitterTask::poll() {
    bool progress = take_freed();
    if (outputs_ended_) return progress;
    if (!unsent_.empty()) {
        progress = send_pending();
        if (!unsent_.empty()) return progress;
    }
    if (giving_back()) return discard_inputs() || progress;  // no new tasks after a failure or a cut
    if (free_.empty()) return progress;  // every slot in flight: back-pressure

    MapTaskSlots::Slot& s = slots_[free_.back()];
    uint32_t n = 0;
    for (size_t i = 0; i < in_.size() && n == 0; ++i) {
        const size_t at = (next_in_ + i) % in_.size();
        n = in_[at]->try_recv_burst(s.input.d, kBurstMax);
        if (n != 0) next_in_ = (at + 1) % in_.size();
    }
    if (n == 0) {
        bool closed = true;
        for (auto* in : in_) closed = closed && in->closed();
        if (!closed) return progress;
        for (auto* in : in_) n = n == 0 ? in->try_recv_burst(s.input.d, kBurstMax) : n;  // last look
        if (n == 0) {
            for (auto* o : out_) o->close();
            outputs_ended_ = true;
            return true;
        }
    }
    s.input.n = static_cast<uint16_t>(n);
    count_passed(n, burst_bytes(s.input));  // for the report: what this emitter took
    s.seq = seq_++;
    current_ = free_.back();
    free_.pop_back();
    for (uint32_t o = 0; o < out_.size(); ++o) unsent_.push_back(o);
    send_pending();
    return true;
}

// ---- worker ----

MapWorkerTask::MapWorkerTask(MapTaskSlots& slots, uint32_t worker, std::vector<Stage*> chain,
                             Channel<uint64_t>* from_parent, std::vector<Channel<uint64_t>*> to_children,
                             Channel<uint64_t>* to_collector, NodeTrace* trace)
    : slots_(slots), w_(worker), chain_(std::move(chain)), in_(from_parent), children_(std::move(to_children)),
      collector_(to_collector), trace_(trace) {}

bool MapWorkerTask::poll() {
    if (done_) return false;
    auto target = [&](uint32_t t) { return t < children_.size() ? children_[t] : collector_; };
    bool progress = false;
    if (!unsent_.empty()) {
        const size_t before = unsent_.size();
        std::erase_if(unsent_, [&](uint32_t t) { return target(t)->try_send(current_); });
        progress = unsent_.size() != before;
        if (!unsent_.empty()) return progress;
    }
    uint64_t idx;
    if (!in_->try_recv(idx)) {
        if (!in_->closed()) return progress;
        if (!in_->try_recv(idx)) {  // closed and drained: the end goes down the tree
            close_chain();
            for (auto* c : children_) c->close();
            collector_->close();
            done_ = true;
            return true;
        }
    }
    current_ = idx;
    // Children first, so they start on their shares while this worker does its own.
    for (uint32_t c = 0; c < children_.size(); ++c)
        if (!children_[c]->try_send(idx)) unsent_.push_back(c);

    MapTaskSlots::Slot& s = slots_[idx];
    uint16_t first, count;
    slots_.slice(w_, s.input.n, first, count);
    Burst& part = part_;
    std::copy_n(s.input.d + first, count, part.d);
    part.n = count;
    if (giving_back()) {
        for (const PacketDesc& d : part) drop_after_failure(d);
        part.n = 0;
    } else {
        run_stage_chain(chain_, part, nullptr, trace_);
    }
    MapTaskSlots::Share& out = s.shares[w_];
    std::copy_n(part.d, part.n, out.d);
    out.n = part.n;
    part.n = 0;

    const auto to_collector = static_cast<uint32_t>(children_.size());
    if (!collector_->try_send(idx)) unsent_.push_back(to_collector);
    return true;
}

void MapWorkerTask::close_chain() {
    // Every stage closes (flushes, releases what it holds), also after a failure; the first
    // error is the node's failure unless it failed already, later ones are logged.
    for (Stage* s : chain_) {
        std::string error;
        try {
            s->close();
        } catch (const std::exception& e) {
            error = e.what();
        } catch (...) {
            error = kNotStdException;
        }
        if (error.empty()) continue;
        if (!failed()) record_failure(error);
        else spdlog::error("closing a stage after the failure: {}", error);
    }
}

bool MapWorkerTask::poll_failed() {
    if (done_) return false;
    if (!reported_failure_) {
        // The chain threw on this task's share: what it held is given back, the collector gets
        // an empty partial so the task completes, and later shares are given back unprocessed.
        reported_failure_ = true;
        for (const PacketDesc& d : part_) drop_after_failure(d);
        part_.n = 0;
        slots_[current_].shares[w_].n = 0;
        unsent_.push_back(static_cast<uint32_t>(children_.size()));
        return true;
    }
    return poll();  // forwards and completes tasks, giving back its shares (failed())
}

// ---- collector ----

MapCollectorTask::MapCollectorTask(MapTaskSlots& slots, std::vector<Channel<uint64_t>*> from_workers,
                                   Channel<PacketDesc>* output, Channel<uint64_t>* freed)
    : slots_(slots), in_(std::move(from_workers)), out_(output), freed_(freed),
      partials_(slots.size(), 0), ready_(slots.size(), -1) {}

bool MapCollectorTask::emit_ready() {
    bool progress = false;
    for (;;) {
        if (pending_slot_ < 0) {
            int64_t& r = ready_[next_seq_ % slots_.size()];
            if (r < 0) return progress;
            pending_slot_ = r;
            r = -1;
            ++next_seq_;
            // The task's survivors, in emission order: the workers' slices in worker order.
            MapTaskSlots::Slot& s = slots_[static_cast<uint64_t>(pending_slot_)];
            pending_.n = 0;
            for (uint32_t w = 0; w < slots_.workers(); ++w) {
                const MapTaskSlots::Share& sh = s.shares[w];
                std::copy_n(sh.d, sh.n, pending_.d + pending_.n);
                pending_.n = static_cast<uint16_t>(pending_.n + sh.n);
            }
            pending_at_ = 0;
            freed_pending_ = true;
            count_passed(pending_.n, burst_bytes(pending_));  // for the report: what it completed
        }
        if (pending_at_ < pending_.n && giving_back()) {
            for (uint16_t i = pending_at_; i < pending_.n; ++i) drop_after_failure(pending_.d[i]);
            pending_at_ = pending_.n;
        }
        if (pending_at_ < pending_.n) {
            const uint32_t sent = out_->try_send_burst(pending_.d + pending_at_, pending_.n - pending_at_);
            pending_at_ = static_cast<uint16_t>(pending_at_ + sent);
            progress |= sent > 0;
            if (pending_at_ < pending_.n) return progress;
        }
        if (freed_pending_) {
            if (!freed_->try_send(static_cast<uint64_t>(pending_slot_))) return progress;
            freed_pending_ = false;
            --in_flight_;
        }
        pending_slot_ = -1;
        progress = true;
    }
}

void MapCollectorTask::count_partial(uint64_t idx) {
    if (partials_[idx]++ == 0) ++in_flight_;
    if (partials_[idx] == slots_.workers()) {  // complete: ready in its turn
        partials_[idx] = 0;
        ready_[slots_[idx].seq % slots_.size()] = static_cast<int64_t>(idx);
    }
}

bool MapCollectorTask::poll() {
    if (done_) return false;
    bool progress = emit_ready();
    if (pending_slot_ >= 0) return progress;
    for (size_t i = 0; i < in_.size(); ++i) {
        const size_t at = (next_in_ + i) % in_.size();
        uint64_t idx;
        for (int k = 0; k < kBurstMax && in_[at]->try_recv(idx); ++k) {
            progress = true;
            count_partial(idx);
        }
    }
    next_in_ = (next_in_ + 1) % in_.size();
    progress |= emit_ready();
    if (progress || pending_slot_ >= 0 || in_flight_ != 0) return progress;
    for (auto* in : in_)
        if (!in->closed()) return false;
    uint64_t idx;
    for (auto* in : in_)
        if (in->try_recv(idx)) {  // closed() was seen after the last send: a last look
            count_partial(idx);
            return true;
        }
    out_->close();
    freed_->close();
    done_ = true;
    return true;
}

}  // namespace tp
