// TilesComm's point-to-point calls: send, recv (each with a fast path for short messages),
// isend/irecv/wait/test, sendrecv and sendrecv_replace, on the protocol engine of
// tiles_comm.cpp, for any communicator of the rank (a Group: its ranks become world ranks
// here, and a received message's source its rank again in finish_recv).
#include <cstring>

#include "framework/mp/tiles_comm.hpp"
#include "framework/mp/tiles_wire.hpp"

namespace tp::mp::detail {

namespace {
// A peer's world rank (proc_null and any_source stay as they are).
int world_of(const Group& g, int r) { return r < 0 ? r : g.world[r]; }
}  // namespace

void TilesComm::g_send(Group& g, const void* buf, size_t bytes, int dest, int tag) {
    dest = g.world[dest];
    // A message its envelope holds, with nothing waiting before it for any destination
    // (pair order) and a credit: pushed at once and complete (eager), with no operation slot.
    if (bytes <= eager_bytes_ && outbox_.empty() && credits_[dest] != 0) {
        uint64_t w[noc::kMaxPayload];
        w[0] = envelope_w0(static_cast<uint32_t>(tag), g.p2p_ctx(), false, false);
        w[1] = bytes;                       // no send slot: nothing follows this envelope
        if (bytes != 0) std::memcpy(w + 2, buf, bytes);
        if (push(dest, kEnvelope, w, 2 + words_for(bytes))) {
            --credits_[dest];
            return;
        }
    }
    const OfferGuard guard{*this};
    const int s = post_send(buf, bytes, dest, g.p2p_ctx(), static_cast<uint32_t>(tag), "send", true);
    block([&] { return sends_[s].done; }, "send");
    finish_send(s);
}

RawStatus TilesComm::g_recv(Group& g, void* buf, size_t cap, int source, int tag) {
    source = world_of(g, source);
    const int ctx = g.p2p_ctx();
    int r = -1;
    // With no receive posted and nothing unexpected, this receive is the first match of
    // whatever arrives: take an envelope-only message straight from the queue into `buf`,
    // with no operation slot, while spinning (and yielding, under a policy with a yield
    // phase). A match that is not such a message, and a wait that reaches the park phase
    // (where check_peers watches the posted receives), go through a posted receive.
    if (posted_.empty() && unexpected_.empty()) {
        RawStatus st;
        bool got = false;
        auto attempt = [&] {
            noc::MessageHeader h;
            bool popped = false;
            for (int i = 0; i < 64 && !got && r < 0 && net_.try_pop(mailbox_, h, scratch_); ++i) {
                popped = true;
                const uint64_t* w = scratch_;
                const int src = static_cast<int>(h.source);
                if (h.tag == kEnvelope && ctx_of(w[0]) == ctx && (source == any_source || src == source) &&
                    tag_fits(tag, static_cast<uint32_t>(w[0]))) {
                    const size_t total = static_cast<uint32_t>(w[1]);
                    if (((w[0] >> 40) & 1) == 0 && total <= eager_bytes_ && total <= cap) {
                        ++owed_[src];
                        if (total != 0) std::memcpy(buf, w + 2, total);
                        st = RawStatus{g.local[src], static_cast<int>(static_cast<uint32_t>(w[0])), total};
                        got = true;
                        break;
                    }
                    r = post_recv(buf, cap, source, ctx, tag, "recv");  // nothing unexpected matches it
                }
                handle(h);
            }
            if (popped) wake_refused();
            if (!outbox_.empty()) push_sends();
            push_control();
            return got || r >= 0;
        };
        const WaitPolicy& p = shared_.wait;
        for (uint32_t round = 0; !attempt() && round < p.spin_rounds + p.yield_rounds; ++round) {
            if (round < p.spin_rounds) cpu_pause();
            else yield_cpu();
        }
        if (got) return st;
    }
    if (r < 0) r = post_recv(buf, cap, source, ctx, tag, "recv");
    block([&] { return recvs_[r].done; }, "recv");
    return finish_recv(r);
}

// Request slots: sends even, receives odd.
Request TilesComm::g_isend(Group& g, const void* buf, size_t bytes, int dest, int tag) {
    return Request{2 * post_send(buf, bytes, g.world[dest], g.p2p_ctx(), static_cast<uint32_t>(tag), "isend")};
}

Request TilesComm::g_irecv(Group& g, void* buf, size_t cap, int source, int tag) {
    return Request{2 * post_recv(buf, cap, world_of(g, source), g.p2p_ctx(), tag, "irecv") + 1};
}

RawStatus TilesComm::g_wait(Request& req) {
    const int slot = req.slot / 2;
    if (req.slot % 2 == 0) {
        if (slot >= static_cast<int>(sends_.size()) || !sends_[slot].live) fail("wait", "the request is not pending");
        block([&] { return sends_[slot].done; }, "wait");
        finish_send(slot);
        return RawStatus{};
    }
    if (slot >= static_cast<int>(recvs_.size()) || !recvs_[slot].live) fail("wait", "the request is not pending");
    block([&] { return recvs_[slot].done; }, "wait");
    return finish_recv(slot);
}

// Never blocks: one round of progress, then a look. A request still pending whose peer has
// finished is named as a blocked wait would name it (the caller may be polling for ever).
bool TilesComm::g_test(Request& req, RawStatus& out) {
    const int slot = req.slot / 2;
    const bool send = req.slot % 2 == 0;
    if (send ? slot >= static_cast<int>(sends_.size()) || !sends_[slot].live
             : slot >= static_cast<int>(recvs_.size()) || !recvs_[slot].live)
        fail("test", "the request is not pending");
    progress();
    if (!(send ? sends_[slot].done : recvs_[slot].done)) {
        check_peers("test");
        return false;
    }
    if (send) {
        finish_send(slot);
        out = RawStatus{};
    } else {
        out = finish_recv(slot);
    }
    return true;
}

RawStatus TilesComm::g_sendrecv(Group& g, const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap,
                                int source, int rtag) {
    dest = world_of(g, dest);
    source = world_of(g, source);
    const int ctx = g.p2p_ctx();
    const OfferGuard guard{*this};
    const int r = source == proc_null ? -1 : post_recv(rbuf, rcap, source, ctx, rtag, "sendrecv");
    const int s =
        dest == proc_null ? -1 : post_send(sbuf, sbytes, dest, ctx, static_cast<uint32_t>(stag), "sendrecv", true);
    block([&] { return (s < 0 || sends_[s].done) && (r < 0 || recvs_[r].done); }, "sendrecv");
    if (s >= 0) finish_send(s);
    return r < 0 ? RawStatus{} : finish_recv(r);
}

RawStatus TilesComm::g_replace(Group& g, void* buf, size_t bytes, int dest, int stag, int source, int rtag) {
    dest = world_of(g, dest);
    source = world_of(g, source);
    const int ctx = g.p2p_ctx();
    if (dest == proc_null && source == proc_null) return RawStatus{};
    if (dest == proc_null) {
        const int r = post_recv(buf, bytes, source, ctx, rtag, "sendrecv_replace");
        block([&] { return recvs_[r].done; }, "sendrecv_replace");
        return finish_recv(r);
    }
    const OfferGuard guard{*this};
    const int s = post_send(buf, bytes, dest, ctx, static_cast<uint32_t>(stag), "sendrecv_replace", true);
    if (source == proc_null) {
        block([&] { return sends_[s].done; }, "sendrecv_replace");
        finish_send(s);
        return RawStatus{};
    }
    const int r = post_recv(buf, bytes, source, ctx, rtag, "sendrecv_replace", s);
    block(
        [&] {
            RecvOp& rr = recvs_[r];
            if (rr.matched && !rr.done && sends_[s].done) flush_replace(rr);
            return sends_[s].done && rr.done;
        },
        "sendrecv_replace");
    finish_send(s);
    return finish_recv(r);
}

}  // namespace tp::mp::detail
