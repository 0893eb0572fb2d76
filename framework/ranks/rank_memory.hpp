// RankMemory: the memory the ranks of one host share for the links between them
// (shared_rank_link.hpp), on Open MPI.
//
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the ranks of each host, and each rank
// allocates one segment of a window over its host's ranks (MPI_Win_allocate_shared): a
// directory, the area of each link it sends on to a rank of its host and, when it has such a
// link, the mbufs of all its packet pools, so that whatever it sends can be lent. The receiving
// rank finds its link in the sender's directory (MPI_Win_shared_query maps the sender's segment
// into it). Links to ranks on other hosts, and every link when lending is off, go by messages.
//
// Construction and destruction are collective: every rank makes one, after the ranks agreed on
// the config, and destroys it after its runner is gone (its pools live in the segment).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "descriptors/mbuf_pool.hpp"

namespace tp {

class RankMemory {
public:
    struct SendLink {
        int link = 0;  // its index (rank_plan.hpp)
        int peer = 0;  // the receiving rank, in `world`
    };
    // `sends`: the links this rank sends on; `pools`: its pools' specs, in order; `can_lend`:
    // false when this rank may neither lend nor be lent packets (a PCI device needs its pools
    // in EAL's memory): its links go by messages. Throws std::runtime_error on every rank when
    // any rank cannot set it up (too little /dev/shm, MPI refuses the window), naming that rank.
    RankMemory(MPI_Comm world, const std::vector<SendLink>& sends, const std::vector<MbufPoolSpec>& pools, bool can_lend);
    ~RankMemory();
    RankMemory(const RankMemory&) = delete;
    RankMemory& operator=(const RankMemory&) = delete;

    // The area of a link this rank lends on; nullptr: the link goes by messages.
    void* send_area(int link) const;
    // This rank's segment (what its links may lend lies in it).
    std::span<std::byte> segment() const { return segment_; }
    // Puts pool `index`'s mbufs in the segment, with the private bytes lending needs (nothing
    // when this rank lends on no link).
    void place_pool(size_t index, MbufPoolSpec& spec) const;

    struct Lender {
        void* area;          // the link's area, as this process maps it
        std::byte* segment;  // the sender's segment, as this process maps it
        uintptr_t base;      // the same segment's address in the sender's process
    };
    // Where link `link` from world rank `peer` lends from; nothing: it goes by messages.
    std::optional<Lender> lender(int link, int peer) const;

private:
    void set_up(MPI_Comm world, const std::vector<SendLink>& sends, const std::vector<MbufPoolSpec>& pools, bool can_lend);
    void release() noexcept;
    std::byte* segment_of(int node_rank) const;

    MPI_Comm node_ = MPI_COMM_NULL;  // the ranks of this host
    MPI_Win win_ = MPI_WIN_NULL;
    bool locked_ = false;  // the lock_all epoch is open
    std::vector<int> node_rank_;  // per world rank: its rank in node_, or MPI_UNDEFINED
    std::span<std::byte> segment_;
    std::vector<size_t> pool_at_;  // per pool: its mbufs' offset in the segment (none: not lending)
};

}  // namespace tp
