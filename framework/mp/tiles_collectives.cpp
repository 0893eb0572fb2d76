// TilesComm's collectives: barrier, bcast, reduce and allreduce over the mesh trees
// (TilesShared::trees), as point-to-point messages on context 1 tagged with (kind, root,
// sequence), so that a rank that called another collective is named, not waited for.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "framework/mp/tiles_comm.hpp"
#include "framework/mp/tiles_wire.hpp"

namespace tp::mp::detail {

void TilesComm::coll_send(const void* buf, size_t bytes, int dest, uint32_t tag, const char* call) {
    const OfferGuard guard{*this};
    const int s = post_send(buf, bytes, dest, 1, tag, call, true);
    block([&] { return sends_[s].done; }, call);
    finish_send(s);
}

void TilesComm::coll_recv(void* buf, size_t bytes, int source, uint32_t tag, const char* call) {
    const int r = post_recv(buf, bytes, source, 1, any_tag, call);
    block([&] { return recvs_[r].done; }, call);
    const uint32_t got = recvs_[r].mtag;
    const size_t n = recvs_[r].total;
    finish_recv(r);
    static const char* kNames[] = {"?", "barrier", "barrier", "bcast", "reduce", "allreduce", "allreduce"};
    if (got != tag) {
        const uint32_t k = std::min<uint32_t>(got >> 28, 6);
        fail(call, "collective mismatch: this is collective #" + std::to_string(coll_seq_) + " (" + call + ", root " +
                       std::to_string((tag >> 16) & 0xfff) + ") here, " + who(source) + " called " + kNames[k] +
                       " (root " + std::to_string((got >> 16) & 0xfff) + ") as collective #" +
                       std::to_string(got & 0xffff));
    }
    if (n != bytes)
        fail(call, "collective mismatch: " + who(source) + " sent " + std::to_string(n) +
                       " bytes where this rank's count takes " + std::to_string(bytes));
}

void TilesComm::tree_bcast(void* buf, size_t bytes, int root, Kind k, const char* call) {
    const MeshTree& t = shared_.trees[root];
    const uint32_t tag = coll_tag(k, root);
    if (rank_ != root) coll_recv(buf, bytes, t.parent[rank_], tag, call);
    const auto& kids = t.children[rank_];
    int slots[8];
    const OfferGuard guard{*this};
    for (size_t i = 0; i < kids.size(); ++i) slots[i] = post_send(buf, bytes, kids[i], 1, tag, call, true);
    block(
        [&] {
            for (size_t i = 0; i < kids.size(); ++i)
                if (!sends_[slots[i]].done) return false;
            return true;
        },
        call);
    for (size_t i = 0; i < kids.size(); ++i) finish_send(slots[i]);
}

void TilesComm::tree_reduce(const void* send, void* recv, int count, Type t, Op op, int root, Kind k,
                            const char* call) {
    const MeshTree& tree = shared_.trees[root];
    const uint32_t tag = coll_tag(k, root);
    const size_t bytes = size_t(count) * type_size(t);
    std::vector<std::byte> acc(static_cast<const std::byte*>(send), static_cast<const std::byte*>(send) + bytes);
    std::vector<std::byte> in(bytes);
    for (int child : tree.children[rank_]) {
        coll_recv(in.data(), bytes, child, tag, call);
        combine(acc.data(), in.data(), count, t, op);
    }
    if (rank_ == root) {
        if (bytes != 0) std::memcpy(recv, acc.data(), bytes);
    } else {
        coll_send(acc.data(), bytes, tree.parent[rank_], tag, call);
    }
}

void TilesComm::barrier() {
    ++coll_seq_;
    char none = 0;
    const MeshTree& t = shared_.trees[0];
    for (int child : t.children[rank_]) coll_recv(&none, 0, child, coll_tag(kBarrierUp, 0), "barrier");
    if (rank_ != 0) coll_send(&none, 0, t.parent[rank_], coll_tag(kBarrierUp, 0), "barrier");
    tree_bcast(&none, 0, 0, kBarrierDown, "barrier");
}

void TilesComm::bcast_bytes(void* buf, size_t bytes, int root) {
    ++coll_seq_;
    tree_bcast(buf, bytes, root, kBcast, "bcast");
}

void TilesComm::reduce_raw(const void* send, void* recv, int count, Type t, Op op, int root) {
    ++coll_seq_;
    tree_reduce(send, recv, count, t, op, root, kReduce, "reduce");
}

void TilesComm::allreduce_raw(const void* send, void* recv, int count, Type t, Op op) {
    ++coll_seq_;
    const size_t bytes = size_t(count) * type_size(t);
    std::vector<std::byte> tmp(bytes);
    tree_reduce(send, tmp.data(), count, t, op, 0, kAllreduceUp, "allreduce");
    if (rank_ == 0 && bytes != 0) std::memcpy(recv, tmp.data(), bytes);
    tree_bcast(recv, bytes, 0, kAllreduceDown, "allreduce");
}

}  // namespace tp::mp::detail
