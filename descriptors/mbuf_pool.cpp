#include "descriptors/mbuf_pool.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include <stdexcept>
#include <string>

#include "descriptors/packet_desc.hpp"

namespace tp {

uint32_t frame_length(const PacketDesc& d) {
    return d.length == PacketDesc::kLengthSaturated ? rte_pktmbuf_pkt_len(d.mbuf) : d.length;
}

MbufPool::MbufPool(const MbufPoolSpec& spec)
    : name_(spec.name), capacity_(spec.mbufs), data_room_(spec.data_room) {
    // The cache may hold at most 1.5x its size; DPDK also caps it at RTE_MEMPOOL_CACHE_MAX_SIZE
    // and requires it below the pool size.
    uint32_t cache = spec.cache;
    if (cache > RTE_MEMPOOL_CACHE_MAX_SIZE) cache = RTE_MEMPOOL_CACHE_MAX_SIZE;
    if (cache * 4 > spec.mbufs) cache = spec.mbufs / 4;
    const auto room = static_cast<uint16_t>(spec.data_room + RTE_PKTMBUF_HEADROOM);
    // Without hugepages DPDK lays a pool out one mbuf per 4 KiB page (no object may cross a
    // page, for IOVA contiguity no device here can use): every header then sits at the same
    // page offset, so all of them share a few cache sets (one L1 set holds 8 to 12 lines) and a
    // burst's headers evict each other. Packed, as they are within hugepages.
    if (!spec.objects.empty() || !rte_eal_has_hugepages()) {
        packed(spec, cache, room);
        return;
    }
    for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops && !spec.ops.empty(); ++i)
        if (spec.ops == rte_mempool_ops_table.ops[i].name) {
            mp_ = rte_pktmbuf_pool_create_by_ops(spec.name.c_str(), spec.mbufs, cache, spec.priv_size, room, spec.socket,
                                                 spec.ops.c_str());
            break;
        }
    if (mp_ == nullptr)  // no such handler (or it failed): DPDK's default
        mp_ = rte_pktmbuf_pool_create(spec.name.c_str(), spec.mbufs, cache, spec.priv_size, room, spec.socket);
    if (mp_ == nullptr)
        throw std::runtime_error("cannot create mbuf pool '" + spec.name + "' of " +
                                 std::to_string(spec.mbufs) + " mbufs: " + rte_strerror(rte_errno));
}

namespace {
constexpr size_t kObjectPage = 4096;

uint32_t object_size(const MbufPoolSpec& spec) {
    rte_mempool_objsz sz;
    return rte_mempool_calc_obj_size(sizeof(rte_mbuf) + spec.priv_size + RTE_PKTMBUF_HEADROOM + spec.data_room, 0, &sz);
}
}  // namespace

// What rte_pktmbuf_pool_create does, with objects that need not be IOVA-contiguous (so they
// pack across pages), in EAL's memory or in spec.objects.
void MbufPool::packed(const MbufPoolSpec& spec, uint32_t cache, uint16_t room) {
    const bool given = !spec.objects.empty();
    const auto fail = [&](const std::string& why) {
        if (mp_ != nullptr) rte_mempool_free(mp_);
        mp_ = nullptr;
        throw std::runtime_error("cannot create mbuf pool '" + spec.name + "' of " + std::to_string(spec.mbufs) + " mbufs" +
                                 (given ? " in shared memory" : "") + ": " + why);
    };
    if (given && (spec.objects.size() < objects_bytes(spec) || reinterpret_cast<uintptr_t>(spec.objects.data()) % kObjectPage != 0))
        fail("the memory given is too small or not page-aligned");
    const uint32_t elt = sizeof(rte_mbuf) + spec.priv_size + room;
    mp_ = rte_mempool_create_empty(spec.name.c_str(), spec.mbufs, elt, cache, sizeof(rte_pktmbuf_pool_private), spec.socket,
                                  RTE_MEMPOOL_F_NO_IOVA_CONTIG);
    if (mp_ == nullptr) fail(rte_strerror(rte_errno));
    if (spec.ops.empty() || rte_mempool_set_ops_byname(mp_, spec.ops.c_str(), nullptr) != 0)  // else DPDK's default
        if (rte_mempool_set_ops_byname(mp_, rte_mbuf_best_mempool_ops(), nullptr) != 0) fail("no mempool handler");
    rte_pktmbuf_pool_private priv{};
    priv.mbuf_data_room_size = room;
    priv.mbuf_priv_size = spec.priv_size;
    rte_pktmbuf_pool_init(mp_, &priv);
    const int added = given ? rte_mempool_populate_iova(mp_, reinterpret_cast<char*>(spec.objects.data()), RTE_BAD_IOVA,
                                                        spec.objects.size(), nullptr, nullptr)
                            : rte_mempool_populate_default(mp_);
    if (added < 0) fail(rte_strerror(-added));
    if (static_cast<uint32_t>(added) != spec.mbufs) fail("room for " + std::to_string(added) + " only");
    rte_mempool_obj_iter(mp_, rte_pktmbuf_init, nullptr);
}

size_t MbufPool::objects_bytes(const MbufPoolSpec& spec) {
    // Packed, each with two lines to spare (DPDK pads an object so that objects spread over the
    // memory channels EAL was told of: -n may change that), and a page for the alignment of
    // the first, rounded to pages.
    const size_t bytes = size_t{spec.mbufs} * (object_size(spec) + 2 * RTE_CACHE_LINE_SIZE) + kObjectPage;
    return (bytes + kObjectPage - 1) / kObjectPage * kObjectPage;
}

MbufPool::MbufPool(MbufPool&& o) noexcept
    : mp_(o.mp_), name_(std::move(o.name_)), capacity_(o.capacity_), data_room_(o.data_room_) {
    o.mp_ = nullptr;
}

MbufPool::~MbufPool() {
    if (mp_ != nullptr) rte_mempool_free(mp_);
}

const char* MbufPool::handler() const { return rte_mempool_get_ops(mp_->ops_index)->name; }

uint32_t MbufPool::available() const { return rte_mempool_avail_count(mp_); }

uint64_t MbufPool::footprint(const MbufPoolSpec& spec) {
    // Packed: MbufPool's layout without hugepages, DPDK's within them (where a 2 MiB page
    // boundary costs at most one object per page: the 1/512 covers it), and the per-lcore
    // caches and the pool's own header.
    const uint64_t objects = objects_bytes(spec);
    return objects + objects / 512 + (uint64_t(spec.cache) * 8 + 4096) * RTE_MAX_LCORE;
}

}  // namespace tp
