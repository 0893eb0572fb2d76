#include "framework/runtime/node_task.hpp"

#include <rte_cycles.h>

#include "framework/runtime/stop_request.hpp"

namespace tp {

namespace {
uint64_t burst_bytes(const Burst& b) {
    uint64_t bytes = 0;
    for (const auto& d : b) bytes += frame_length(d);
    return bytes;
}
}  // namespace

bool NodeTask::flush_pending() {
    const uint16_t left = pending_.n - pending_at_;
    const uint32_t sent = out_->try_send_burst(pending_.d + pending_at_, left);
    pending_at_ += static_cast<uint16_t>(sent);
    if (pending_at_ == pending_.n) pending_.n = pending_at_ = 0;
    return sent > 0;
}

void NodeTask::finish() {
    stage_->close();
    if (out_ != nullptr) out_->close();
    done_ = true;
}

bool NodeTask::poll() {
    if (done_) return false;
    bool progress = false;
    if (pending_.n != 0) {
        progress = flush_pending();
        if (pending_.n != 0) return progress;  // downstream still full: back-pressure
    }

    StageStats& st = stage_->stats();
    Burst& b = pending_;
    if (stage_->kind() == StageKind::Source) {
        if (stop_requested()) {
            finish();
            return true;
        }
        const uint64_t t0 = rte_rdtsc();
        const SourceStatus s = stage_->produce(b);
        st.cycles.add(rte_rdtsc() - t0);
        if (s == SourceStatus::Done && b.n == 0) {
            finish();
            return true;
        }
        if (b.n == 0) return progress;
        st.out.add(b.n);
        st.bytes_out.add(burst_bytes(b));
        st.bursts.inc();
    } else {
        uint32_t n = in_->try_recv_burst(b.d, kBurstMax);
        if (n == 0) {
            if (!in_->closed()) return progress;
            // closed() was read with acquire after the sender's last send: one more receive
            // sees everything that was sent.
            n = in_->try_recv_burst(b.d, kBurstMax);
            if (n == 0) {
                finish();
                return true;
            }
        }
        b.n = static_cast<uint16_t>(n);
        st.in.add(n);
        st.bursts.inc();
        const uint64_t drops_before = st.drops.get();
        if (stage_->kind() == StageKind::Sink) {
            const uint64_t bytes = burst_bytes(b);
            const uint64_t t0 = rte_rdtsc();
            stage_->process(b);
            st.cycles.add(rte_rdtsc() - t0);
            st.out.add(n - (st.drops.get() - drops_before));
            st.bytes_out.add(bytes);
            b.n = 0;
            return true;
        }
        const uint64_t t0 = rte_rdtsc();
        stage_->process(b);
        st.cycles.add(rte_rdtsc() - t0);
        st.out.add(b.n);
    }
    if (b.n != 0) flush_pending();
    return true;
}

}  // namespace tp
