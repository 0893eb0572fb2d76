// TilesComm: one rank of the `tiles` backend, a protocol engine over noc::MessageNetwork.
//
// Every rank receives through one queue of its tile (queue 0; its four message tags are bound
// there): envelopes, data segments, clear-to-send grants and credits from every other rank
// arrive in it, so a receive from any_source looks at one place. A message up to
// kEagerBytes travels inside its envelope (eager); one up to a few segments (no longer than
// the sendrecv_replace ring) follows its envelope at once in segments (streamed eager);
// a longer one sends an envelope announcing
// it (ready-to-send), and once a receive matches it the receiver grants bytes (all of them,
// or for sendrecv_replace no more than its bounded buffer can stage) and the sender streams
// them in segments of kTilesSegmentBytes. A blocking send's long message is offered for a
// direct copy instead (rendezvous): its envelope carries the buffer's address and a
// handoff word of the sender (TilesShared::Handoff); a plain receive that matches it copies
// the bytes straight from the sender's buffer into its own (one copy, none through the
// queue) and then marks the handoff copied, which completes the send; a sendrecv_replace
// receive grants segments as above (its buffer is still being sent from). Only blocking
// sends offer it: their buffer stays put until the send returns, and a send that fails
// while offered withdraws the offer (waiting out a copy in progress) before it unwinds. Envelopes are matched in arrival order, which per
// sender is send order, so pair order holds; unmatched envelopes wait in an unexpected list
// (eager data copied, long data left at the sender).
//
// Flow control: a sender may have `credits` segments in flight to each receiver; the
// receiver hands them back in batches as it pops them (it always pops everything: nothing
// it needs to progress can be stuck behind). Control messages (grants, credits) need no
// credit; a push the queue refuses is retried. A blocked rank drives progress between
// attempts and parks on its doorbell, which every push into its queue rings (and a rank
// that finishes, so that peers waiting on it notice). A sender whose push a full queue
// refused (many senders into one queue outgrow its room) marks itself in the receiver's
// `refused` set, and the receiver rings it once it has popped (see TilesComm::wake_refused
// for the ordering), so the sender never sleeps out the park timeout on a queue with room.
// Thread-safety: the rank's own thread only; `finished` flags of peers are read with acquire.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tilepipe/mp.hpp"
#include "framework/mp/mesh_tree.hpp"
#include "framework/mp/tiles_world.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/topology/topology.hpp"

namespace tp::mp::detail {

// What the ranks share: the network, the placement, the trees and who has finished.
struct TilesShared {
    TilesShared(const TilesOptions& o, const WaitPolicy& w, Topology t, std::vector<int> tiles);
    TilesOptions options;
    WaitPolicy wait;  // how a blocked rank waits (block())
    Topology topology;
    std::vector<int> tile_of_rank;
    noc::MessageNetwork net;
    std::vector<MeshTree> trees;  // per root
    struct alignas(64) Flag {
        std::atomic<bool> finished{false};
    };
    std::unique_ptr<Flag[]> flags;  // per rank: its function returned or threw
    std::unique_ptr<Doorbell[]> bells;  // per rank: rung by every push into its queue
    // A direct (rendezvous) send's state, read and written by its sender and the receiver
    // that copies it: generation << 2 | phase. The generation tells a reused slot from the
    // offer an old envelope names. Per rank, indexed by send slot, grown by its rank only
    // (a deque: growing moves no element, so peers may hold addresses); here rather than in
    // TilesComm so that an envelope outliving its sender's rank never names freed memory.
    struct alignas(64) Handoff {
        std::atomic<uint64_t> state{0};
    };
    std::unique_ptr<std::deque<Handoff>[]> handoffs;
    bool light_bells = false;           // bells made light (Doorbell::make_light)
    // Per rank: the senders its full queue refused (one bit each) and whether any is set.
    struct alignas(64) Refused {
        std::atomic<uint32_t> any{0};
        std::unique_ptr<std::atomic<uint64_t>[]> bits;
    };
    std::unique_ptr<Refused[]> refused;
};

// A communicator as one rank's engine sees it: the world, or one split() made. Its members'
// world ranks in its rank order, and its contexts (tiles_wire.hpp): messages carry them, so a
// communicator's never match another's. Operations post world ranks; what a user sees
// (statuses, errors) is translated back through `local`.
struct Group {
    uint32_t id = 0;           // 0: the world
    int rank = 0;              // this rank's rank in it
    std::vector<int> world;    // member rank -> world rank
    std::vector<int> local;    // world rank -> member rank, -1 for a non-member
    std::vector<MeshTree> trees;  // per root, built on first use (the world's: TilesShared::trees)
    uint32_t coll_seq = 0;     // collectives called on it so far
    int size() const { return static_cast<int>(world.size()); }
    int p2p_ctx() const { return static_cast<int>(2 * id); }
    int coll_ctx() const { return static_cast<int>(2 * id + 1); }
};

class TilesComm final : public Comm {
public:
    static constexpr size_t kEagerBytes = 125 * 8;
    // What the replace buffer allows: an envelope's data and a segment hold no more than it
    // (below 1008 bytes, every message of the world moves in pieces of the buffer's size, as
    // a buffered MPI moves them). A blocking send longer than an envelope holds is offered
    // for a direct copy: one copy instead of two through queue slots.
    static constexpr size_t eager_bytes_for(size_t buffer) { return std::min(kEagerBytes, buffer & ~size_t{7}); }
    static constexpr size_t segment_bytes_for(size_t buffer) { return std::min(kTilesSegmentBytes, buffer & ~size_t{7}); }

    TilesComm(TilesShared& shared, int rank, Team& team);
    int rank() const override { return rank_; }
    Team& team() override { return team_; }
    int size() const override { return static_cast<int>(shared_.tile_of_rank.size()); }
    const char* backend() const override { return "tiles"; }
    void barrier() override { g_barrier(world()); }
    // Operations started and never waited (checked when the rank's function returns).
    size_t live_requests() const;
    // The most bytes a sendrecv_replace ever held staged at once on this rank (its ring holds
    // options.replace_buffer; tests check the bound).
    size_t replace_peak_bytes() const { return replace_peak_; }
    // Parks of this rank that slept out the park timeout (nobody rang it): with every wake-up
    // delivered, only a peer that is busy elsewhere for that long causes one.
    uint64_t park_timeouts() const { return bell_->park_timeouts(); }

    // The operations on a communicator `g` of this rank (the world's overrides below pass the
    // world; TilesSubComm its own group). Ranks are g's; messages carry g's contexts.
    void g_send(Group& g, const void* buf, size_t bytes, int dest, int tag);
    RawStatus g_recv(Group& g, void* buf, size_t cap, int source, int tag);
    Request g_isend(Group& g, const void* buf, size_t bytes, int dest, int tag);
    Request g_irecv(Group& g, void* buf, size_t cap, int source, int tag);
    RawStatus g_sendrecv(Group& g, const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap,
                         int source, int rtag);
    RawStatus g_replace(Group& g, void* buf, size_t bytes, int dest, int stag, int source, int rtag);
    void g_barrier(Group& g);
    void g_bcast(Group& g, void* buf, size_t bytes, int root);
    void g_reduce(Group& g, const void* send, void* recv, int count, Type t, Op op, int root);
    void g_allreduce(Group& g, const void* send, void* recv, int count, Type t, Op op, const char* call = "allreduce");
    std::unique_ptr<Comm> g_split(Group& g, int color, int key);
    // wait() and test() on a request of any of this rank's communicators (its slot names it).
    RawStatus g_wait(Request& r);
    bool g_test(Request& r, RawStatus& out);
    // Sets the communicator whose rank an error names while a call on it runs.
    struct Scope {
        TilesComm& comm;
        Group* saved;
        Scope(TilesComm& c, Group& g) : comm(c), saved(c.cur_) { c.cur_ = &g; }
        ~Scope() { comm.cur_ = saved; }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
    };
    // An error of the call now running, naming this rank in its communicator (hides Comm::fail).
    [[noreturn]] void fail(const std::string& call, const std::string& what) const {
        throw Error(cur_->rank, call, what);
    }

protected:
    void send_bytes(const void* buf, size_t bytes, int dest, int tag) override { g_send(world(), buf, bytes, dest, tag); }
    RawStatus recv_bytes(void* buf, size_t cap, int source, int tag) override {
        return g_recv(world(), buf, cap, source, tag);
    }
    Request isend_bytes(const void* buf, size_t bytes, int dest, int tag) override {
        return g_isend(world(), buf, bytes, dest, tag);
    }
    Request irecv_bytes(void* buf, size_t cap, int source, int tag) override {
        return g_irecv(world(), buf, cap, source, tag);
    }
    RawStatus wait_raw(Request& r) override { return g_wait(r); }
    RawStatus sendrecv_bytes(const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap, int source,
                             int rtag) override {
        return g_sendrecv(world(), sbuf, sbytes, dest, stag, rbuf, rcap, source, rtag);
    }
    RawStatus replace_bytes(void* buf, size_t bytes, int dest, int stag, int source, int rtag) override {
        return g_replace(world(), buf, bytes, dest, stag, source, rtag);
    }
    void bcast_bytes(void* buf, size_t bytes, int root) override { g_bcast(world(), buf, bytes, root); }
    void reduce_raw(const void* send, void* recv, int count, Type t, Op op, int root) override {
        g_reduce(world(), send, recv, count, t, op, root);
    }
    void allreduce_raw(const void* send, void* recv, int count, Type t, Op op) override {
        g_allreduce(world(), send, recv, count, t, op);
    }
    bool test_raw(Request& r, RawStatus& out) override { return g_test(r, out); }
    std::unique_ptr<Comm> split_raw(int color, int key) override { return g_split(world(), color, key); }

private:
    Group& world() { return *groups_[0]; }
    Group& group_of(int ctx) const { return *groups_[static_cast<size_t>(ctx) >> 1]; }
    // "rank R" for world rank `r`, R its rank in the communicator of context `ctx`.
    std::string who(int ctx, int r) const { return "rank " + std::to_string(group_of(ctx).local[r]); }
    const MeshTree& tree(Group& g, int root);
    struct SendOp {
        bool live = false, done = false;
        bool direct = false;        // offered for a direct copy (see the top)
        uint64_t gen = 0;           // its handoff generation
        int dest = 0, ctx = 0;
        uint32_t tag = 0;
        const std::byte* buf = nullptr;
        size_t bytes = 0;
        bool rts = false;           // long: envelope first, data once granted
        bool streamed = false;      // eager but longer than an envelope: the rest follows unasked
        bool envelope_out = false;
        size_t granted = 0, pushed = 0;
        uint32_t recv_id = 0;       // the receiver's operation, from its grant
        const char* call = "";
    };
    struct RecvOp {
        bool live = false, done = false, posted = false;
        int source = 0, ctx = 0;
        int64_t tag = 0;            // any_tag or a tag
        std::byte* buf = nullptr;
        size_t cap = 0;
        bool matched = false;
        int msrc = 0;
        uint32_t mtag = 0;
        size_t total = 0, received = 0, flushed = 0, granted = 0;
        bool rts = false;           // granted by this receiver (else eager)
        bool grant_due = false;     // a grant to push (the queue refused it, or it grew)
        uint32_t msgid = 0;
        int replace_send = -1;      // sendrecv_replace: the send whose bytes it may overwrite
        std::vector<std::byte> staging;  // sendrecv_replace: a ring of replace_buffer bytes
        const char* call = "";
    };
    // A direct send's offer, from its envelope (state == nullptr: none).
    struct Offer {
        std::atomic<uint64_t>* state = nullptr;
        const std::byte* buf = nullptr;
        uint64_t gen = 0;
    };
    struct Unexpected {
        int src = 0, ctx = 0;
        uint32_t tag = 0;
        size_t total = 0;
        bool rts = false;
        uint32_t msgid = 0;
        Offer offer;
        std::vector<std::byte> data;  // eager payload (total bytes; `arrived` of them so far)
        size_t arrived = 0;
        uint64_t uid = 0;
    };
    // A streamed eager message still arriving: its sender's slot, and where the rest goes.
    struct Stream {
        int src = 0;
        uint32_t msgid = 0;
        int recv = -1;     // a matched receive, or
        uint64_t uid = 0;  // the unexpected entry it fills
    };

    int post_send(const void* buf, size_t bytes, int dest, int ctx, uint32_t tag, const char* call, bool direct = false);
    int post_recv(void* buf, size_t cap, int source, int ctx, int64_t tag, const char* call, int replace_send = -1);
    RawStatus finish_recv(int slot);
    void finish_send(int slot);
    template <typename Done>
    void block(Done&& done, const char* call);
    bool progress();
    void handle(const noc::MessageHeader& h);
    void on_envelope(int src, const uint64_t* w);
    void match(int slot, int src, uint32_t tag, size_t total, bool rts, uint32_t msgid, const std::byte* eager,
               size_t avail, const Offer& offer);
    void copy_offered(RecvOp& r, const Offer& offer);
    void withdraw_offers();
    // Withdraws this rank's direct offers when the blocking call that made them throws.
    struct OfferGuard {
        TilesComm& comm;
        const int uncaught = std::uncaught_exceptions();
        ~OfferGuard() {
            if (std::uncaught_exceptions() > uncaught) comm.withdraw_offers();
        }
    };
    void on_more(int src, const uint64_t* w, uint32_t words);
    void deliver(RecvOp& r, size_t offset, const std::byte* data, size_t n);
    void flush_replace(RecvOp& r);
    void regrant(RecvOp& r);
    bool push_sends();
    bool push_control();
    bool push(int dest, noc::Tag tag, uint64_t* words, uint32_t n, bool pad = true);
    void note_refused(int dest);
    void wake_refused();
    void check_peers(const char* call);
    bool finished(int r) const { return shared_.flags[r].finished.load(std::memory_order_acquire); }
    static bool tag_fits(int64_t want, uint32_t got) { return want == any_tag || uint32_t(want) == got; }

    // Collectives: messages on context 1, tagged with (kind, root, sequence) so that a
    // mismatched call is recognised.
    // Kinds 1..8 (4 bits of the tag); split runs an allreduce of its own kinds.
    enum Kind : uint32_t { kBarrierUp = 1, kBarrierDown, kBcast, kReduce, kAllreduceUp, kAllreduceDown, kSplitUp, kSplitDown };
    static uint32_t coll_tag(const Group& g, Kind k, int root) {
        return (uint32_t(k) << 28) | (uint32_t(root) << 16) | (g.coll_seq & 0xffff);
    }
    void coll_send(Group& g, const void* buf, size_t bytes, int dest, uint32_t tag, const char* call);
    void coll_recv(Group& g, void* buf, size_t bytes, int source, uint32_t tag, const char* call);
    void tree_bcast(Group& g, void* buf, size_t bytes, int root, Kind k, const char* call);
    void tree_reduce(Group& g, const void* send, void* recv, int count, Type t, Op op, int root, Kind k,
                     const char* call);

    TilesShared& shared_;
    Team& team_;  // the rank's tiles (TilesTeam, or one tile)
    noc::MessageNetwork& net_;
    const int rank_;
    const uint32_t credits_max_;
    noc::MessageNetwork::Mailbox mailbox_;
    Doorbell* bell_;
    std::vector<SendOp> sends_;
    std::vector<RecvOp> recvs_;
    std::vector<int> free_sends_, free_recvs_;
    std::vector<int> outbox_;   // send slots with something left to push, in posting order
    std::vector<int> posted_;   // unmatched receive slots, in posting order
    std::vector<int> active_;   // matched long receives still taking data
    std::deque<Unexpected> unexpected_;
    std::vector<Stream> streams_;
    uint64_t next_uid_ = 0;
    const size_t eager_bytes_;  // longest message its envelope holds (eager_bytes_for)
    const size_t seg_bytes_;    // one data segment's payload (segment_bytes_for)
    const size_t eager_max_;    // longest eager message: a few segments, within the replace ring
    std::vector<uint32_t> credits_;  // per destination: segments it can still take
    std::vector<uint32_t> owed_;     // per source: segments popped, credits not yet returned
    uint32_t next_msgid_ = 0;
    uint64_t next_gen_ = 0;
    std::deque<TilesShared::Handoff>& handoffs_;  // this rank's, by send slot
    std::vector<std::unique_ptr<Group>> groups_;  // by id; a split's stays (its messages may still come)
    Group* cur_ = nullptr;      // the communicator of the call running (see Scope)
    uint32_t next_group_ = 1;   // the least id this rank may give a new communicator
    bool rearmed_ = false;     // a refused push set its bit anew since the last park announcement
    size_t replace_peak_ = 0;  // see replace_peak_bytes()
    noc::MessageNetwork::Route route_;  // of the last push (see push())
    int route_dest_ = -1;
    noc::Tag route_tag_ = 0;
    uint64_t scratch_[noc::kMaxPayload];
};

// A communicator split() made: a Group of the rank's engine, whose calls it forwards.
class TilesSubComm final : public Comm {
public:
    TilesSubComm(TilesComm& engine, Group& g) : engine_(engine), g_(g) {}
    int rank() const override { return g_.rank; }
    int size() const override { return g_.size(); }
    const char* backend() const override { return "tiles"; }
    Team& team() override { return engine_.team(); }
    void barrier() override { in([&] { engine_.g_barrier(g_); }); }

protected:
    void send_bytes(const void* buf, size_t bytes, int dest, int tag) override {
        in([&] { engine_.g_send(g_, buf, bytes, dest, tag); });
    }
    RawStatus recv_bytes(void* buf, size_t cap, int source, int tag) override {
        return in([&] { return engine_.g_recv(g_, buf, cap, source, tag); });
    }
    Request isend_bytes(const void* buf, size_t bytes, int dest, int tag) override {
        return in([&] { return engine_.g_isend(g_, buf, bytes, dest, tag); });
    }
    Request irecv_bytes(void* buf, size_t cap, int source, int tag) override {
        return in([&] { return engine_.g_irecv(g_, buf, cap, source, tag); });
    }
    RawStatus wait_raw(Request& r) override {
        return in([&] { return engine_.g_wait(r); });
    }
    RawStatus sendrecv_bytes(const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap, int source,
                             int rtag) override {
        return in([&] { return engine_.g_sendrecv(g_, sbuf, sbytes, dest, stag, rbuf, rcap, source, rtag); });
    }
    RawStatus replace_bytes(void* buf, size_t bytes, int dest, int stag, int source, int rtag) override {
        return in([&] { return engine_.g_replace(g_, buf, bytes, dest, stag, source, rtag); });
    }
    void bcast_bytes(void* buf, size_t bytes, int root) override { in([&] { engine_.g_bcast(g_, buf, bytes, root); }); }
    void reduce_raw(const void* send, void* recv, int count, Type t, Op op, int root) override {
        in([&] { engine_.g_reduce(g_, send, recv, count, t, op, root); });
    }
    void allreduce_raw(const void* send, void* recv, int count, Type t, Op op) override {
        in([&] { engine_.g_allreduce(g_, send, recv, count, t, op); });
    }
    bool test_raw(Request& r, RawStatus& out) override {
        return in([&] { return engine_.g_test(r, out); });
    }
    std::unique_ptr<Comm> split_raw(int color, int key) override {
        return in([&] { return engine_.g_split(g_, color, key); });
    }

private:
    template <typename F>
    auto in(F&& f) -> decltype(f()) {
        const TilesComm::Scope scope(engine_, g_);
        return f();
    }
    TilesComm& engine_;
    Group& g_;
};

// Waits until done(), driving progress and following the wait policy (a template: the
// point-to-point and collective files both use it).
template <typename Done>
void TilesComm::block(Done&& done, const char* call) {
    if (done()) return;
    const WaitPolicy& policy = shared_.wait;
    policy.wait(
        [&] {
            progress();
            return done();
        },
        [&](auto& attempt) {
            check_peers(call);
            // As park_on, plus: a refused push marks this rank in the receiver's set before the
            // announcement (the refusal happened in an earlier attempt), so the receiver's pop
            // and this re-check are ordered by the bell's barrier (see wake_refused). A refusal
            // in the re-check that had to set its bit anew (the receiver took it meanwhile) is
            // not covered by that barrier: go round again instead of sleeping.
            rearmed_ = false;
            bell_->prepare_park();
            if (attempt()) {
                bell_->cancel_park();
                return true;
            }
            if (rearmed_) {
                bell_->cancel_park();
                return false;
            }
            bell_->park(policy.park_timeout);
            return false;
        });
}

}  // namespace tp::mp::detail
