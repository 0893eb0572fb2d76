#include "framework/mp/tiles_comm.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "framework/mp/tiles_wire.hpp"

namespace tp::mp::detail {

TilesShared::TilesShared(const TilesOptions& o, const WaitPolicy& w, Topology t, std::vector<int> tiles)
    : options(o), wait(w), topology(std::move(t)), tile_of_rank(std::move(tiles)), net([&] {
          noc::NetworkConfig c;
          c.tiles = static_cast<uint32_t>(tile_of_rank.size());
          c.queues = 1;
          // Room for every peer's credits of full segments, within reason: beyond it a push
          // is refused and retried, never lost.
          const uint64_t want = uint64_t{c.tiles} * o.credits * (noc::kMaxPayload + 1) + 64 * c.tiles;
          uint32_t words = 256;
          while (words < want && words < (1u << 15)) words *= 2;
          c.queue_words = words;
          c.max_payload = noc::kMaxPayload;
          // The ranks ring their own doorbells (TilesShared::bells): only the receiver ever
          // parks, so the network's bell on every pop (for parked senders) would be a fence
          // per message for nobody.
          c.doorbells = false;
          return c;
      }()),
      flags(std::make_unique<Flag[]>(tile_of_rank.size())),
      bells(std::make_unique<Doorbell[]>(tile_of_rank.size())),
      handoffs(std::make_unique<std::deque<Handoff>[]>(tile_of_rank.size())),
      refused(std::make_unique<Refused[]>(tile_of_rank.size())) {
    const int n = static_cast<int>(tile_of_rank.size());
    // Light bells: a push rings without a fence; a rank about to park pays instead (see Doorbell).
    light_bells = true;
    for (int r = 0; r < n; ++r) light_bells &= bells[r].make_light();
    for (int r = 0; r < n; ++r) refused[r].bits = std::make_unique<std::atomic<uint64_t>[]>((n + 63) / 64);
    for (noc::TileId r = 0; r < static_cast<noc::TileId>(n); ++r)
        for (noc::Tag tag : {kEnvelope, kGrant, kData, kCredit, kMore}) net.bind_tag(r, tag, 0);
    auto hops = [&](int a, int b) { return topology.hops(tile_of_rank[a], tile_of_rank[b]); };
    trees.reserve(n);
    for (int root = 0; root < n; ++root) trees.push_back(mesh_tree(n, root, hops));
}

TilesComm::TilesComm(TilesShared& shared, int rank, Team& team)
    : shared_(shared), team_(team), net_(shared.net), rank_(rank), credits_max_(shared.options.credits),
      mailbox_(net_.mailbox(rank, 0)), bell_(&shared.bells[rank]),
      eager_bytes_(eager_bytes_for(shared.options.replace_buffer)),
      seg_bytes_(segment_bytes_for(shared.options.replace_buffer)),
      eager_max_(std::min(eager_bytes_ + kStreamSegments * seg_bytes_, shared.options.replace_buffer)),
      credits_(shared.tile_of_rank.size(), shared.options.credits), owed_(shared.tile_of_rank.size(), 0),
      handoffs_(shared.handoffs[rank]) {
    auto world = std::make_unique<Group>();
    world->rank = rank;
    for (int r = 0; r < size(); ++r) world->world.push_back(r);
    world->local = world->world;
    groups_.push_back(std::move(world));
    cur_ = groups_[0].get();
}

size_t TilesComm::live_requests() const {
    size_t n = 0;
    for (const SendOp& s : sends_) n += s.live;
    for (const RecvOp& r : recvs_) n += r.live;
    return n;
}

// ---- posting and completing -------------------------------------------------------------

int TilesComm::post_send(const void* buf, size_t bytes, int dest, int ctx, uint32_t tag, const char* call,
                         bool direct) {
    int slot;
    if (!free_sends_.empty()) {
        slot = free_sends_.back();
        free_sends_.pop_back();
    } else {
        slot = static_cast<int>(sends_.size());
        sends_.emplace_back();
        handoffs_.emplace_back();
    }
    SendOp& s = sends_[slot];
    s = SendOp{};
    s.live = true;
    s.dest = dest;
    s.ctx = ctx;
    s.tag = tag;
    s.buf = static_cast<const std::byte*>(buf);
    s.bytes = bytes;
    s.direct = direct && bytes > eager_bytes_;
    s.rts = s.direct || bytes > std::max(eager_bytes_, eager_max_);
    s.streamed = !s.rts && bytes > eager_bytes_;
    if (s.direct) {
        s.gen = ++next_gen_;
        // relaxed: the envelope's push (a release) publishes it with the buffer's contents.
        handoffs_[slot].state.store(s.gen << 2 | kOffered, std::memory_order_relaxed);
    }
    s.call = call;
    outbox_.push_back(slot);
    push_sends();
    return slot;
}

int TilesComm::post_recv(void* buf, size_t cap, int source, int ctx, int64_t tag, const char* call, int replace_send) {
    int slot;
    if (!free_recvs_.empty()) {
        slot = free_recvs_.back();
        free_recvs_.pop_back();
    } else {
        slot = static_cast<int>(recvs_.size());
        recvs_.emplace_back();
    }
    {
        RecvOp& r = recvs_[slot];
        std::vector<std::byte> staging = std::move(r.staging);
        r = RecvOp{};
        r.staging = std::move(staging);
        r.live = true;
        r.source = source;
        r.ctx = ctx;
        r.tag = tag;
        r.buf = static_cast<std::byte*>(buf);
        r.cap = cap;
        r.call = call;
        r.replace_send = replace_send;
        if (replace_send >= 0) r.staging.resize(shared_.options.replace_buffer);
    }
    // The oldest unexpected envelope that fits matches first (MPI's order).
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        if (it->ctx != ctx || (source != any_source && it->src != source) || !tag_fits(tag, it->tag)) continue;
        Unexpected u = std::move(*it);
        unexpected_.erase(it);
        match(slot, u.src, u.tag, u.total, u.rts, u.msgid, u.data.data(), u.arrived, u.offer);
        // The rest of a streamed message now goes to the receive, if it fits (match() refused
        // one that does not; nothing may then be copied past the receive's buffer).
        if (!u.rts && u.arrived < u.total && u.total <= recvs_[slot].cap)
            for (Stream& st : streams_)
                if (st.recv < 0 && st.uid == u.uid) st.recv = slot;
        return slot;
    }
    recvs_[slot].posted = true;
    posted_.push_back(slot);
    return slot;
}

RawStatus TilesComm::finish_recv(int slot) {
    RecvOp& r = recvs_[slot];
    RawStatus st{group_of(r.ctx).local[r.msrc], static_cast<int>(r.mtag), r.total};
    r.live = false;
    active_.erase(std::remove(active_.begin(), active_.end(), slot), active_.end());
    free_recvs_.push_back(slot);
    return st;
}

void TilesComm::finish_send(int slot) {
    sends_[slot].live = false;
    free_sends_.push_back(slot);
}

// ---- progress ---------------------------------------------------------------------------

bool TilesComm::progress() {
    bool any = false;
    noc::MessageHeader h;
    for (int i = 0; i < 64 && net_.try_pop(mailbox_, h, scratch_); ++i) {
        handle(h);
        any = true;
    }
    if (any) wake_refused();
    if (!outbox_.empty()) any |= push_sends();
    any |= push_control();
    return any;
}

void TilesComm::handle(const noc::MessageHeader& h) {
    const int src = static_cast<int>(h.source);
    const uint64_t* w = scratch_;
    switch (h.tag) {
    case kEnvelope:
        ++owed_[src];
        on_envelope(src, w);
        break;
    case kData: {
        ++owed_[src];
        RecvOp& r = recvs_[static_cast<uint32_t>(w[0])];
        const size_t offset = w[0] >> 32;
        const size_t n = std::min(size_t{h.length - 1} * kWord, r.total - offset);
        deliver(r, offset, reinterpret_cast<const std::byte*>(w + 1), n);
        break;
    }
    case kGrant: {
        SendOp& s = sends_[static_cast<uint32_t>(w[0])];
        s.recv_id = static_cast<uint32_t>(w[0] >> 32);
        s.granted = std::max<size_t>(s.granted, w[1]);
        break;
    }
    case kCredit:
        credits_[src] += static_cast<uint32_t>(w[0]);
        break;
    case kMore:
        ++owed_[src];
        on_more(src, w, h.length);
        break;
    default:
        break;  // nothing else is bound to this queue
    }
}

void TilesComm::on_envelope(int src, const uint64_t* w) {
    const uint32_t tag = static_cast<uint32_t>(w[0]);
    const int ctx = ctx_of(w[0]);
    const bool rts = ((w[0] >> 40) & 1) != 0;
    const size_t total = static_cast<uint32_t>(w[1]);
    const uint32_t msgid = static_cast<uint32_t>(w[1] >> 32);
    const auto* eager = reinterpret_cast<const std::byte*>(w + 2);
    const size_t avail = rts ? 0 : std::min(total, eager_bytes_);
    Offer offer;
    if (((w[0] >> 41) & 1) != 0)
        offer = Offer{reinterpret_cast<std::atomic<uint64_t>*>(w[2]), reinterpret_cast<const std::byte*>(w[3]), w[4]};
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        RecvOp& r = recvs_[*it];
        if (r.ctx != ctx || (r.source != any_source && r.source != src) || !tag_fits(r.tag, tag)) continue;
        const int slot = *it;
        posted_.erase(it);
        r.posted = false;
        match(slot, src, tag, total, rts, msgid, eager, avail, offer);
        if (avail < total && !rts && r.total <= r.cap) streams_.push_back(Stream{src, msgid, slot, 0});
        return;
    }
    Unexpected u{src, ctx, tag, total, rts, msgid, offer, {}, avail, next_uid_++};
    if (!rts) {
        u.data.resize(total);
        if (avail != 0) std::memcpy(u.data.data(), eager, avail);  // an empty message: no buffer (nullptr)
        if (avail < total) streams_.push_back(Stream{src, msgid, -1, u.uid});
    }
    unexpected_.push_back(std::move(u));
}

void TilesComm::on_more(int src, const uint64_t* w, uint32_t words) {
    const uint32_t msgid = static_cast<uint32_t>(w[0]);
    const size_t offset = w[0] >> 32;
    const auto* data = reinterpret_cast<const std::byte*>(w + 1);
    for (auto it = streams_.begin(); it != streams_.end(); ++it) {
        if (it->src != src || it->msgid != msgid) continue;
        if (it->recv >= 0) {
            RecvOp& r = recvs_[it->recv];
            const size_t n = std::min(size_t{words - 1} * kWord, r.total - offset);
            deliver(r, offset, data, n);
            if (r.received == r.total) streams_.erase(it);
            return;
        }
        for (Unexpected& u : unexpected_) {
            if (u.uid != it->uid) continue;
            const size_t n = std::min(size_t{words - 1} * kWord, u.total - offset);
            if (n != 0) std::memcpy(u.data.data() + offset, data, n);
            u.arrived += n;
            if (u.arrived == u.total) streams_.erase(it);
            return;
        }
        return;
    }
}

void TilesComm::match(int slot, int src, uint32_t tag, size_t total, bool rts, uint32_t msgid, const std::byte* eager,
                      size_t avail, const Offer& offer) {
    RecvOp& r = recvs_[slot];
    r.matched = true;
    r.msrc = src;
    r.mtag = tag;
    r.total = total;
    r.msgid = msgid;
    r.rts = rts;
    if (total > r.cap) {
        if ((r.ctx & 1) != 0) {  // a collective's: coll_recv names the mismatch (call first, then count)
            r.done = true;
            return;
        }
        // Named in the receive's communicator (this may run during a call on another).
        throw Error(group_of(r.ctx).rank, r.call,
                    "message truncated: " + who(r.ctx, src) + " sent " + std::to_string(total) + " bytes (tag " +
                        std::to_string(tag) + "), the receive buffer holds " + std::to_string(r.cap));
    }
    if (!rts) {
        deliver(r, 0, eager, avail);  // a streamed message's rest follows (on_more)
        if (total == 0) r.done = r.replace_send < 0 || sends_[r.replace_send].done;
        return;
    }
    if (offer.state != nullptr && r.replace_send < 0) return copy_offered(r, offer);
    active_.push_back(slot);
    regrant(r);
}

// A direct offer matched by a plain receive: copy from the sender's buffer, then hand it
// back. Orders: the buffer's contents were published by the envelope (the sender's release
// of the queue slot, this rank's acquire in the pop). The CAS claims the offer against a
// withdrawal (acquire: nothing of the copy starts before it). The release of kCopied puts
// every read of the copy before the sender's acquire that sees it, after which the sender
// may reuse the buffer; then the sender's bell, rung light as after a push (see push()).
void TilesComm::copy_offered(RecvOp& r, const Offer& offer) {
    uint64_t expect = offer.gen << 2 | kOffered;
    // Withdrawn: the sender's call failed and its rank is ending. The receive stays matched
    // with nothing received, so check_peers names the sender once it has finished (after
    // its own error, which is the cause, was recorded).
    if (!offer.state->compare_exchange_strong(expect, offer.gen << 2 | kCopying, std::memory_order_acquire,
                                              std::memory_order_relaxed))
        return;
    if (r.total != 0) std::memcpy(r.buf, offer.buf, r.total);
    offer.state->store(offer.gen << 2 | kCopied, std::memory_order_release);
    shared_.bells[r.msrc].ring_light();
    r.received = r.flushed = r.total;
    r.done = true;
}

// A blocking call that offered direct copies is throwing: its buffers are about to go. Take
// back every offer not yet claimed (acq_rel: a receiver's CAS then fails), and wait out a
// copy in progress (acquire: its reads are done when kCopied is seen).
void TilesComm::withdraw_offers() {
    for (size_t slot = 0; slot < sends_.size(); ++slot) {
        const SendOp& s = sends_[slot];
        if (!s.live || s.done || !s.direct) continue;
        std::atomic<uint64_t>& st = handoffs_[slot].state;
        uint64_t expect = s.gen << 2 | kOffered;
        if (st.compare_exchange_strong(expect, s.gen << 2 | kWithdrawn, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
            continue;
        while (st.load(std::memory_order_acquire) == (s.gen << 2 | kCopying)) yield_cpu();
    }
}

void TilesComm::deliver(RecvOp& r, size_t offset, const std::byte* data, size_t n) {
    if (r.replace_send < 0) {
        if (n != 0) std::memcpy(r.buf + offset, data, n);
        r.received += n;
        r.flushed = r.received;
        if (r.received == r.total) r.done = true;
        return;
    }
    // sendrecv_replace: stage in the ring; bytes move into the buffer once sent from it.
    const size_t ring = r.staging.size();
    for (size_t done = 0; done < n;) {
        const size_t at = (offset + done) % ring;
        const size_t k = std::min(n - done, ring - at);
        std::memcpy(r.staging.data() + at, data + done, k);
        done += k;
    }
    r.received += n;
    replace_peak_ = std::max(replace_peak_, r.received - r.flushed);
    flush_replace(r);
}

void TilesComm::flush_replace(RecvOp& r) {
    const SendOp& s = sends_[r.replace_send];
    // Bytes of the buffer the send no longer needs: all once done, else those pushed.
    const size_t free_upto = s.done ? r.cap : s.pushed;
    const size_t ring = r.staging.size();
    while (r.flushed < std::min(r.received, free_upto)) {
        const size_t at = r.flushed % ring;
        const size_t k = std::min({std::min(r.received, free_upto) - r.flushed, ring - at});
        std::memcpy(r.buf + r.flushed, r.staging.data() + at, k);
        r.flushed += k;
    }
    if (r.matched && r.flushed == r.total && s.done) r.done = true;
    else if (r.matched) regrant(r);
}

// A long receive's grant: everything at once, or for sendrecv_replace what the ring can hold
// beyond the bytes already moved into the buffer. Pushed when it grew by a segment or more,
// or reached the end.
void TilesComm::regrant(RecvOp& r) {
    if (!r.rts) return;  // eager: nothing to grant
    size_t want = r.replace_send < 0 ? r.total : std::min(r.total, r.flushed + r.staging.size());
    if (want < r.total) want &= ~(kWord - 1);  // whole words: only a last segment ends mid-word
    if (want > r.granted && (want - r.granted >= seg_bytes_ || want == r.total)) {
        r.granted = want;
        r.grant_due = true;
    }
}

// A message is padded to whole lines of the ring (a header and 4k - 1 words: 4k slots of
// 16 bytes), so a short one lies in one line and its pop waits for one line, not two.
// `words` has room for the padding. Not padded: a data segment that is neither full nor
// the message's last (its receiver takes its length from the message's).
bool TilesComm::push(int dest, noc::Tag tag, uint64_t* words, uint32_t n, bool pad) {
    const uint32_t padded = pad ? ((n + 4) & ~3u) - 1 : n;
    for (uint32_t i = n; i < padded; ++i) words[i] = 0;
    // The last route, kept: a run of messages to one rank skips the tag table (tags are bound
    // once, before the ranks start, so a route never goes stale).
    if (dest != route_dest_ || tag != route_tag_) {
        route_ = net_.route(static_cast<noc::TileId>(rank_), static_cast<noc::TileId>(dest), tag);
        route_dest_ = dest;
        route_tag_ = tag;
    }
    if (!net_.try_push(route_, words, padded)) {
        note_refused(dest);
        return false;
    }
    // After the publish: a receiver parked on it re-checks. ring_light: no fence per message;
    // a light bell's sleeper runs the barrier when it announces itself (see Doorbell).
    shared_.bells[dest].ring_light();
    return true;
}

// The queue of `dest` is full: ask it to ring this rank once it has popped. seq_cst: the bit
// is set before `any` (the receiver reads `any` first), and its old value says whether the
// receiver took the bit since this rank last set it (then block() must not sleep on it).
void TilesComm::note_refused(int dest) {
    TilesShared::Refused& r = shared_.refused[dest];
    const uint64_t bit = uint64_t{1} << (rank_ % 64);
    if ((r.bits[rank_ / 64].fetch_or(bit, std::memory_order_seq_cst) & bit) == 0) rearmed_ = true;
    r.any.store(1, std::memory_order_seq_cst);
}

// After popping: ring the senders this rank's queue refused. The Dekker pattern of Doorbell
// with the roles of ring_light: this rank published room (the release of head in the pop)
// and then reads the announcements; a refused sender announced itself (its bit, then its
// bell's parked flag) before its bell's barrier and re-tries the push after it. With light
// bells that barrier is a membarrier, which orders this rank's store before its load as a
// fence would (so here only the compiler's order is kept); without, both sides fence. So
// either this rank sees the bit and rings, or the sender's re-try sees the room.
void TilesComm::wake_refused() {
    if (shared_.light_bells) std::atomic_signal_fence(std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
    TilesShared::Refused& r = shared_.refused[rank_];
    // relaxed: ordered by the fence or the sender's barrier, as above.
    if (r.any.load(std::memory_order_relaxed) == 0) return;
    // acq_rel: clear the summary before the bits, so a sender setting both after this still
    // leaves `any` set for the next look.
    r.any.exchange(0, std::memory_order_acq_rel);
    const int words = (size() + 63) / 64;
    for (int i = 0; i < words; ++i) {
        // relaxed pre-check: most words are clear; seq_cst exchange: takes the bits for good.
        if (r.bits[i].load(std::memory_order_relaxed) == 0) continue;
        uint64_t b = r.bits[i].exchange(0, std::memory_order_seq_cst);
        while (b != 0) {
            const int p = i * 64 + __builtin_ctzll(b);
            b &= b - 1;
            shared_.bells[p].ring_light();
        }
    }
}

bool TilesComm::push_sends() {
    bool any = false;
    uint64_t w[noc::kMaxPayload];
    // Envelopes to one destination leave in posting order: once one cannot go, later ones wait.
    std::vector<int> blocked_dests;  // allocates only when a destination is out of credits
    for (size_t i = 0; i < outbox_.size();) {
        const int slot = outbox_[i];
        SendOp& s = sends_[slot];
        const bool dest_blocked = std::find(blocked_dests.begin(), blocked_dests.end(), s.dest) != blocked_dests.end();
        if (!s.envelope_out) {
            if (dest_blocked || credits_[s.dest] == 0) {
                blocked_dests.push_back(s.dest);
                ++i;
                continue;
            }
            w[0] = envelope_w0(s.tag, s.ctx, s.rts, s.direct);
            w[1] = uint64_t(s.bytes) | (uint64_t(slot) << 32);
            uint32_t n = 2;
            if (s.direct) {
                w[2] = reinterpret_cast<uintptr_t>(&handoffs_[slot].state);
                w[3] = reinterpret_cast<uintptr_t>(s.buf);
                w[4] = s.gen;
                n = 5;
            }
            if (!s.rts) {
                const size_t first = std::min(s.bytes, eager_bytes_);
                if (first != 0) std::memcpy(w + 2, s.buf, first);
                n += words_for(first);
            }
            if (!push(s.dest, kEnvelope, w, n)) {
                blocked_dests.push_back(s.dest);
                ++i;
                continue;
            }
            --credits_[s.dest];
            s.envelope_out = true;
            any = true;
            if (!s.rts) {
                s.pushed = std::min(s.bytes, eager_bytes_);
                s.granted = s.bytes;  // a streamed message's rest goes unasked
            }
        }
        // acquire: pairs with the copier's release of kCopied (see copy_offered).
        if (s.direct && s.envelope_out && s.granted == 0 &&
            handoffs_[slot].state.load(std::memory_order_acquire) == (s.gen << 2 | kCopied)) {
            s.pushed = s.bytes;
            any = true;
        }
        while ((s.rts || s.streamed) && s.pushed < s.granted && credits_[s.dest] != 0) {
            const size_t k = std::min({seg_bytes_, s.bytes - s.pushed, s.granted - s.pushed});
            w[0] = uint64_t{s.rts ? s.recv_id : static_cast<uint32_t>(slot)} | (uint64_t(s.pushed) << 32);
            std::memcpy(w + 1, s.buf + s.pushed, k);
            if (!push(s.dest, s.rts ? kData : kMore, w, 1 + words_for(k), s.pushed + k == s.bytes)) break;
            --credits_[s.dest];
            s.pushed += k;
            any = true;
        }
        if (s.pushed == s.bytes && s.envelope_out) {
            s.done = true;
            outbox_.erase(outbox_.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        ++i;
    }
    // A sendrecv_replace's receive may now move staged bytes into the buffer.
    for (int slot : active_) {
        RecvOp& r = recvs_[slot];
        if (r.replace_send >= 0) flush_replace(r);
    }
    return any;
}

bool TilesComm::push_control() {
    bool any = false;
    const uint32_t batch = std::max(1u, credits_max_ / 2);
    for (size_t src = 0; src < owed_.size(); ++src) {
        if (owed_[src] < batch || finished(static_cast<int>(src))) continue;
        uint64_t w[3] = {owed_[src]};
        if (push(static_cast<int>(src), kCredit, w, 1)) {
            owed_[src] = 0;
            any = true;
        }
    }
    for (size_t i = 0; i < active_.size();) {
        RecvOp& r = recvs_[active_[i]];
        if (r.grant_due) {
            uint64_t w[3] = {uint64_t{r.msgid} | (uint64_t(active_[i]) << 32), r.granted};
            if (push(r.msrc, kGrant, w, 2)) {
                r.grant_due = false;
                any = true;
            }
        }
        if (r.done || !r.live) {
            active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        ++i;
    }
    return any;
}

// Called while blocked: fails when an operation waits on a rank whose function has ended.
void TilesComm::check_peers(const char* call) {
    auto gone = [&](int r) { return r != rank_ && finished(r); };
    bool suspect = false;
    for (const RecvOp& r : recvs_)
        if (r.live && !r.done)
            suspect |= r.matched ? r.received < r.total && gone(r.msrc) : (r.source == any_source || gone(r.source));
    for (const SendOp& s : sends_)
        if (s.live && !s.done) suspect |= gone(s.dest);
    if (!suspect) return;
    // What the finished ranks pushed before finishing is visible now (acquire above): take it.
    while (progress()) {
    }
    // Unless a live sender's message, reserved but not yet published, holds the head of this
    // rank's queue: what lies behind it (a finished rank's last segments too) cannot be popped
    // yet. Judge only a queue popped empty; that sender rings this rank once it publishes.
    // (The finished ranks' reservations are in the tail read here: their release of
    // `finished`, this rank's acquire in finished().)
    if (net_.queued_words(static_cast<noc::TileId>(rank_), 0) != 0) return;
    for (const RecvOp& r : recvs_) {
        if (!r.live || r.done) continue;
        // (A sendrecv_replace's receive may have every byte and wait only for its own send.)
        if (r.matched && r.received < r.total && gone(r.msrc))
            fail(call, who(r.ctx, r.msrc) + " finished before sending all of its message");
        if (!r.matched && r.source != any_source && gone(r.source))
            fail(call, "waiting for a message from " + who(r.ctx, r.source) + ", which has finished without sending it");
        if (!r.matched && r.source == any_source) {
            bool all_gone = true;  // of the receive's communicator
            for (int p : group_of(r.ctx).world) all_gone &= p == rank_ || finished(p);
            if (all_gone) fail(call, "waiting for a message from any rank, and every other rank has finished");
        }
    }
    for (const SendOp& s : sends_)
        if (s.live && !s.done && gone(s.dest))
            fail(call, "sending to " + who(s.ctx, s.dest) + ", which has finished without receiving the message");
}

}  // namespace tp::mp::detail
