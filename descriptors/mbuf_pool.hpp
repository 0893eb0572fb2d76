// MbufPool: an owned DPDK packet-mbuf pool (rte_pktmbuf_pool_create), freed on destruction.
//
// Thread-safety: allocation and free are safe from any thread (DPDK's MP/MC ring plus
// per-lcore caches for registered threads). `available()` is exact only when no thread is
// using the pool, e.g. at the end of a run, where it must equal `capacity()`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "descriptors/packet_desc.hpp"
#include "descriptors/tsan_sync.hpp"

namespace tp {

struct MbufPoolSpec {
    std::string name;            // unique per process
    uint32_t mbufs = 8191;       // count (2^q - 1 is optimal for the ring underneath)
    uint32_t cache = 256;        // per-lcore cache
    uint16_t data_room = 2048;   // bytes of packet data per segment (headroom excluded)
    int socket = -1;             // NUMA node, -1 = any
    // Mempool handler. "stack" (LIFO) hands out the mbufs freed last, whose lines are still
    // in cache; DPDK's default ring is FIFO and cycles through the whole pool. Falls back to
    // the default handler when the driver is missing.
    std::string ops = "stack";
    uint16_t priv_size = 0;      // bytes between each mbuf's header and its buffer (rte_mbuf_to_priv)
    // Where the mbufs themselves go: page-aligned memory of at least objects_bytes(spec) that
    // the caller keeps until the pool is gone (a window shared with another process); empty:
    // EAL's memory. The pool's header and handler stay in EAL's memory either way.
    std::span<std::byte> objects;
};

class MbufPool {
public:
    explicit MbufPool(const MbufPoolSpec& spec);
    ~MbufPool();
    MbufPool(const MbufPool&) = delete;
    MbufPool& operator=(const MbufPool&) = delete;
    MbufPool(MbufPool&& o) noexcept;
    MbufPool& operator=(MbufPool&&) = delete;

    rte_mempool* get() const { return mp_; }
    const std::string& name() const { return name_; }
    uint32_t capacity() const { return capacity_; }
    uint32_t available() const;
    uint16_t data_room() const { return data_room_; }
    const char* handler() const;  // the mempool handler in use ("stack", "ring_mp_mc", ...)

    // Bytes of EAL memory a pool of this spec needs (used to size --no-huge memory).
    static uint64_t footprint(const MbufPoolSpec& spec);
    // Bytes the mbufs of a spec take, packed (MbufPoolSpec::objects: page-aligned, this many).
    static size_t objects_bytes(const MbufPoolSpec& spec);

private:
    void packed(const MbufPoolSpec& spec, uint32_t cache, uint16_t room);  // no hugepages, or spec.objects

    rte_mempool* mp_ = nullptr;
    std::string name_;
    uint32_t capacity_ = 0;
    uint16_t data_room_ = 0;
};

}  // namespace tp

namespace tp {

// rte_pktmbuf_alloc_bulk with the misses overlapped: mbufs coming back from a sink on another
// CPU have their header lines (and data line) in that CPU's cache, so fetch all of them before
// resetting any, instead of one serial miss per mbuf. Returns false, taking nothing, when the
// pool cannot supply `n`.
inline bool alloc_packets(rte_mempool* mp, rte_mbuf** m, unsigned n) {
    if (rte_mempool_get_bulk(mp, reinterpret_cast<void**>(m), n) != 0) return false;
    tsan_acquire(mp);  // pairs with release_to_pool: the last owner's accesses happened before
    for (unsigned i = 0; i < n; ++i) {
        rte_prefetch0(m[i]);
        rte_prefetch0(reinterpret_cast<const char*>(m[i]) + RTE_CACHE_LINE_SIZE);
    }
    for (unsigned i = 0; i < n; ++i) {
        rte_pktmbuf_reset(m[i]);
        rte_prefetch0(rte_pktmbuf_mtod(m[i], const void*));  // about to be written
    }
    return true;
}

// PacketDesc::length for `m`: its frame length if it is simple (see PacketDesc) for `app_pool`,
// else kLengthSaturated. Reads the header, so for mbufs a PMD or a library handed over.
inline uint16_t descriptor_length(const rte_mbuf* m, const rte_mempool* app_pool) {
    const bool simple = m->nb_segs == 1 && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 && m->pool == app_pool;
    return simple ? saturate_length(rte_pktmbuf_pkt_len(m)) : PacketDesc::kLengthSaturated;
}

// Call before handing mbufs back to their pool (free, put): tells ThreadSanitizer that what
// this thread did to them happens before the next owner's allocation (alloc_packets). No
// code without TSan.
inline void release_to_pool([[maybe_unused]] rte_mbuf* const* m, [[maybe_unused]] unsigned n) {
#if defined(__SANITIZE_THREAD__)
    // Every read of a segment comes before the release that covers it.
    for (unsigned i = 0; i < n; ++i)
        for (rte_mbuf* s = m[i]; s != nullptr;) {
            rte_mbuf* const next = s->next;
            tsan_release(s->pool);
            s = next;
        }
#endif
}

// rte_pktmbuf_free_bulk / rte_pktmbuf_free with release_to_pool first: how stages free packets.
inline void free_packets(rte_mbuf** m, unsigned n) {
    release_to_pool(m, n);
    rte_pktmbuf_free_bulk(m, n);
}
inline void free_packet(rte_mbuf* m) { free_packets(&m, 1); }

}  // namespace tp
