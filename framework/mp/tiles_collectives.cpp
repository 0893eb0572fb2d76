// TilesComm's collectives: barrier, bcast, reduce, allreduce and split over the mesh trees of
// a communicator's members, as point-to-point messages on its collective context tagged with
// (kind, root, sequence), so that a rank that called another collective is named, not
// waited for.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "framework/mp/tiles_comm.hpp"
#include "framework/mp/tiles_wire.hpp"

namespace tp::mp::detail {

// The world's trees were built once for every root (TilesShared); a split communicator's are
// built as its collectives need them, over its members' hops on the mesh.
const MeshTree& TilesComm::tree(Group& g, int root) {
    if (g.id == 0) return shared_.trees[root];
    if (g.trees.empty()) g.trees.resize(g.world.size());
    MeshTree& t = g.trees[root];
    if (t.parent.empty()) {
        auto hops = [&](int a, int b) { return shared_.topology.hops(shared_.tile_of_rank[g.world[a]], shared_.tile_of_rank[g.world[b]]); };
        t = mesh_tree(g.size(), root, hops);
    }
    return t;
}

void TilesComm::coll_send(Group& g, const void* buf, size_t bytes, int dest, uint32_t tag, const char* call) {
    const OfferGuard guard{*this};
    const int s = post_send(buf, bytes, g.world[dest], g.coll_ctx(), tag, call, true);
    block([&] { return sends_[s].done; }, call);
    finish_send(s);
}

void TilesComm::coll_recv(Group& g, void* buf, size_t bytes, int source, uint32_t tag, const char* call) {
    const int r = post_recv(buf, bytes, g.world[source], g.coll_ctx(), any_tag, call);
    block([&] { return recvs_[r].done; }, call);
    const uint32_t got = recvs_[r].mtag;
    const size_t n = recvs_[r].total;
    finish_recv(r);
    static const char* kNames[] = {"?", "barrier", "barrier", "bcast", "reduce", "allreduce", "allreduce", "split", "split"};
    const std::string peer = "rank " + std::to_string(source);
    if (got != tag) {
        const uint32_t k = std::min<uint32_t>(got >> 28, 8);
        fail(call, "collective mismatch: this is collective #" + std::to_string(g.coll_seq) + " (" + call + ", root " +
                       std::to_string((tag >> 16) & 0xfff) + ") here, " + peer + " called " + kNames[k] + " (root " +
                       std::to_string((got >> 16) & 0xfff) + ") as collective #" + std::to_string(got & 0xffff));
    }
    if (n != bytes)
        fail(call, "collective mismatch: " + peer + " sent " + std::to_string(n) + " bytes where this rank's count takes " +
                       std::to_string(bytes));
}

void TilesComm::tree_bcast(Group& g, void* buf, size_t bytes, int root, Kind k, const char* call) {
    const MeshTree& t = tree(g, root);
    const uint32_t tag = coll_tag(g, k, root);
    if (g.rank != root) coll_recv(g, buf, bytes, t.parent[g.rank], tag, call);
    const auto& kids = t.children[g.rank];
    int slots[8];
    const OfferGuard guard{*this};
    for (size_t i = 0; i < kids.size(); ++i) slots[i] = post_send(buf, bytes, g.world[kids[i]], g.coll_ctx(), tag, call, true);
    block(
        [&] {
            for (size_t i = 0; i < kids.size(); ++i)
                if (!sends_[slots[i]].done) return false;
            return true;
        },
        call);
    for (size_t i = 0; i < kids.size(); ++i) finish_send(slots[i]);
}

void TilesComm::tree_reduce(Group& g, const void* send, void* recv, int count, Type t, Op op, int root, Kind k,
                            const char* call) {
    const MeshTree& tr = tree(g, root);
    const uint32_t tag = coll_tag(g, k, root);
    const size_t bytes = size_t(count) * type_size(t);
    std::vector<std::byte> acc(static_cast<const std::byte*>(send), static_cast<const std::byte*>(send) + bytes);
    std::vector<std::byte> in(bytes);
    for (int child : tr.children[g.rank]) {
        coll_recv(g, in.data(), bytes, child, tag, call);
        combine(acc.data(), in.data(), count, t, op);
    }
    if (g.rank == root) {
        if (bytes != 0) std::memcpy(recv, acc.data(), bytes);
    } else {
        coll_send(g, acc.data(), bytes, tr.parent[g.rank], tag, call);
    }
}

void TilesComm::g_barrier(Group& g) {
    ++g.coll_seq;
    char none = 0;
    const MeshTree& t = tree(g, 0);
    for (int child : t.children[g.rank]) coll_recv(g, &none, 0, child, coll_tag(g, kBarrierUp, 0), "barrier");
    if (g.rank != 0) coll_send(g, &none, 0, t.parent[g.rank], coll_tag(g, kBarrierUp, 0), "barrier");
    tree_bcast(g, &none, 0, 0, kBarrierDown, "barrier");
}

void TilesComm::g_bcast(Group& g, void* buf, size_t bytes, int root) {
    ++g.coll_seq;
    tree_bcast(g, buf, bytes, root, kBcast, "bcast");
}

void TilesComm::g_reduce(Group& g, const void* send, void* recv, int count, Type t, Op op, int root) {
    ++g.coll_seq;
    tree_reduce(g, send, recv, count, t, op, root, kReduce, "reduce");
}

void TilesComm::g_allreduce(Group& g, const void* send, void* recv, int count, Type t, Op op, const char* call) {
    ++g.coll_seq;
    const bool split = std::strcmp(call, "split") == 0;
    const size_t bytes = size_t(count) * type_size(t);
    std::vector<std::byte> tmp(bytes);
    tree_reduce(g, send, tmp.data(), count, t, op, 0, split ? kSplitUp : kAllreduceUp, call);
    if (g.rank == 0 && bytes != 0) std::memcpy(recv, tmp.data(), bytes);
    tree_bcast(g, recv, bytes, 0, split ? kSplitDown : kAllreduceDown, call);
}

// Every member learns every member's (color, key) and the least id each may give a new
// communicator (an allreduce summing one slot per member). The new communicators all take the
// largest of those ids: no member of this one has used it, and after this none will use it
// or a smaller one, so a later communicator with two of the same members never shares it.
// Those of different colors share the id, but no rank is in two of them.
std::unique_ptr<Comm> TilesComm::g_split(Group& g, int color, int key) {
    const int n = g.size();
    std::vector<int> mine(3 * size_t(n), 0), all(3 * size_t(n));
    mine[3 * g.rank] = color;
    mine[3 * g.rank + 1] = key;
    mine[3 * g.rank + 2] = static_cast<int>(next_group_);
    g_allreduce(g, mine.data(), all.data(), 3 * n, Type::Int, Op::Sum, "split");
    uint32_t id = 0;
    for (int i = 0; i < n; ++i) id = std::max(id, static_cast<uint32_t>(all[3 * i + 2]));
    if (id > kMaxGroupId)
        fail("split", "this run has made its " + std::to_string(kMaxGroupId) + " communicators (the tiles backend's most)");
    next_group_ = id + 1;
    if (color == undefined) return nullptr;
    std::vector<int> members;
    for (int i = 0; i < n; ++i)
        if (all[3 * i] == color) members.push_back(i);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[3 * a + 1] < all[3 * b + 1]; });
    auto sub = std::make_unique<Group>();
    sub->id = id;
    sub->local.assign(size(), -1);
    for (int m : members) {
        if (m == g.rank) sub->rank = sub->size();
        sub->local[g.world[m]] = sub->size();
        sub->world.push_back(g.world[m]);
    }
    if (groups_.size() <= id) groups_.resize(id + 1);
    groups_[id] = std::move(sub);
    return std::make_unique<TilesSubComm>(*this, *groups_[id]);
}

}  // namespace tp::mp::detail
