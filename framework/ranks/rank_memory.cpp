#include "framework/ranks/rank_memory.hpp"

#include <sys/statvfs.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "framework/ranks/link_common.hpp"
#include "framework/ranks/shared_rank_link.hpp"

namespace tp {

namespace {

constexpr size_t kPage = 4096;

size_t page_up(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// At the segment's first page: where each link's area is. Written by the segment's rank before
// the barrier that ends construction; read-only after.
struct Directory {
    uint64_t base;   // the segment's address in its rank's process
    uint64_t links;  // entries that follow
};
struct DirectoryEntry {
    int64_t link;
    uint64_t offset;  // of its area, from the segment's start
};
DirectoryEntry* entries(Directory* d) { return reinterpret_cast<DirectoryEntry*>(d + 1); }
const DirectoryEntry* entries(const Directory* d) { return reinterpret_cast<const DirectoryEntry*>(d + 1); }

size_t directory_bytes(size_t links) { return page_up(sizeof(Directory) + links * sizeof(DirectoryEntry)); }

void check_window(int rc, const char* what) { throw_on_mpi_error(rc, "memory shared between ranks", what); }

// Every rank learns whether any rank failed (`error`: this one's, "" when none) and throws if
// one did: a rank that stopped alone would leave the others in the next collective call.
void agree_or_throw(MPI_Comm world, const std::string& error) {
    int mine[2] = {error.empty() ? 0 : 1, 0}, any[2] = {0, 0};
    MPI_Comm_rank(world, &mine[1]);
    MPI_Allreduce(mine, any, 1, MPI_2INT, MPI_MAXLOC, world);
    if (!error.empty()) throw std::runtime_error("memory shared between ranks: " + error);
    if (any[0] != 0) throw std::runtime_error("memory shared between ranks: rank " + std::to_string(any[1]) + " could not set it up");
}

// Free bytes where Open MPI keeps its shared segments (/dev/shm on Linux); unknown: the most.
uint64_t shm_free_bytes() {
    struct statvfs v{};
    if (statvfs("/dev/shm", &v) != 0) return ~uint64_t{0};
    return uint64_t{v.f_bavail} * v.f_frsize;
}

}  // namespace

RankMemory::RankMemory(MPI_Comm world, const std::vector<SendLink>& sends, const std::vector<MbufPoolSpec>& pools, bool can_lend) {
    try {
        set_up(world, sends, pools, can_lend);
    } catch (...) {
        release();
        throw;
    }
}

void RankMemory::set_up(MPI_Comm world, const std::vector<SendLink>& sends, const std::vector<MbufPoolSpec>& pools, bool can_lend) {
    int world_size = 0;
    MPI_Comm_size(world, &world_size);
    check_window(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_), "group the ranks of this host");
    MPI_Group world_group, node_group;
    MPI_Comm_group(world, &world_group);
    MPI_Comm_group(node_, &node_group);
    std::vector<int> all(static_cast<size_t>(world_size));
    for (int r = 0; r < world_size; ++r) all[static_cast<size_t>(r)] = r;
    node_rank_.resize(all.size());
    MPI_Group_translate_ranks(world_group, world_size, all.data(), node_group, node_rank_.data());
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    // A link lends only when both its ranks can: one with a PCI device keeps its pools in
    // EAL's memory (a NIC needs their IO addresses) and takes no lent buffer to send on.
    int mine = can_lend ? 1 : 0;
    std::vector<int> lends(all.size());
    MPI_Allgather(&mine, 1, MPI_INT, lends.data(), 1, MPI_INT, world);

    // The segment: directory, link areas, then (if it lends at all) the pools' mbufs.
    std::vector<const SendLink*> lent;
    for (const SendLink& s : sends)
        if (node_rank_.at(static_cast<size_t>(s.peer)) != MPI_UNDEFINED && mine != 0 && lends.at(static_cast<size_t>(s.peer)) != 0)
            lent.push_back(&s);
    size_t bytes = directory_bytes(lent.size());
    const size_t areas_at = bytes;
    bytes = page_up(bytes + lent.size() * shared_link_area_bytes());
    if (!lent.empty())
        for (MbufPoolSpec spec : pools) {
            spec.priv_size = shared_link_mbuf_priv();
            pool_at_.push_back(bytes);
            bytes += page_up(MbufPool::objects_bytes(spec));
        }
    bytes += kPage;  // each segment on pages of its own (see below)
    // What every rank of this host asks for must fit where Open MPI puts it.
    uint64_t host = 0;
    const uint64_t own = bytes;
    MPI_Allreduce(&own, &host, 1, MPI_UINT64_T, MPI_SUM, node_);
    std::string error;
    if (bytes - kPage >= (uint64_t{1} << 32) * 64)  // records name an mbuf by its cache line, in 32 bits
        error = "the pools take " + std::to_string(bytes >> 30) + " GiB, above the 256 GiB a rank can lend from";
    else if (const uint64_t free = shm_free_bytes(); host > free)
        error = "the ranks of this host need " + std::to_string(host >> 20) + " MiB of shared memory and /dev/shm has " +
                std::to_string(free >> 20) + " MiB free (give it more, or lower pool.mbufs)";
    agree_or_throw(world, error);

    // Each segment on pages of its own (the offset of a byte within its page is the same in
    // every process that maps it, so each aligns alike).
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, node_, &base, &win_);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) win_ = MPI_WIN_NULL;
    agree_or_throw(world, rc == MPI_SUCCESS ? "" : "allocate a window: " + mpi_error_text(rc));
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    // Every rank may touch every segment from now until the window goes.
    check_window(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "open the window");
    locked_ = true;
    auto* begin = reinterpret_cast<std::byte*>(page_up(reinterpret_cast<uintptr_t>(base)));
    segment_ = std::span<std::byte>(begin, bytes - kPage);
    auto* dir = reinterpret_cast<Directory*>(begin);
    dir->base = reinterpret_cast<uintptr_t>(begin);
    dir->links = lent.size();
    for (size_t i = 0; i < lent.size(); ++i) {
        const size_t at = areas_at + i * shared_link_area_bytes();
        entries(dir)[i] = DirectoryEntry{lent[i]->link, at};
        init_shared_link_area(begin + at);
    }
    // What this rank wrote is seen by the others before any of them looks at it.
    MPI_Win_sync(win_);
    MPI_Barrier(node_);
    MPI_Win_sync(win_);
}

RankMemory::~RankMemory() { release(); }

void RankMemory::release() noexcept {
    if (win_ != MPI_WIN_NULL) {
        if (locked_) MPI_Win_unlock_all(win_);
        MPI_Win_free(&win_);
    }
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

void* RankMemory::send_area(int link) const {
    const auto* dir = reinterpret_cast<const Directory*>(segment_.data());
    for (uint64_t i = 0; i < dir->links; ++i)
        if (entries(dir)[i].link == link) return segment_.data() + entries(dir)[i].offset;
    return nullptr;
}

void RankMemory::place_pool(size_t index, MbufPoolSpec& spec) const {
    if (index >= pool_at_.size()) return;
    spec.priv_size = shared_link_mbuf_priv();
    spec.objects = segment_.subspan(pool_at_[index], page_up(MbufPool::objects_bytes(spec)));
}

std::byte* RankMemory::segment_of(int node_rank) const {
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    check_window(MPI_Win_shared_query(win_, node_rank, &size, &unit, &base), "find a rank's segment");
    return reinterpret_cast<std::byte*>(page_up(reinterpret_cast<uintptr_t>(base)));
}

std::optional<RankMemory::Lender> RankMemory::lender(int link, int peer) const {
    const int node_peer = node_rank_.at(static_cast<size_t>(peer));
    if (node_peer == MPI_UNDEFINED) return std::nullopt;
    std::byte* seg = segment_of(node_peer);
    const auto* dir = reinterpret_cast<const Directory*>(seg);
    for (uint64_t i = 0; i < dir->links; ++i)
        if (entries(dir)[i].link == link) return Lender{seg + entries(dir)[i].offset, seg, static_cast<uintptr_t>(dir->base)};
    return std::nullopt;
}

}  // namespace tp
