#include "stages/dedup.hpp"

#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "framework/stage/registry.hpp"

namespace tp {

namespace {

constexpr uint32_t kWindowMax = 1u << 24;
constexpr uint64_t kDefaultBytesPerSlot = 2048;
constexpr uint64_t kMemoryMax = 1ull << 34;  // 16 GiB

uint32_t frame_hash(const rte_mbuf* m, uint32_t length) {
    uint32_t h = rte_hash_crc_4byte(length, 0x5bd1e995);
    for (const rte_mbuf* s = m; s != nullptr; s = s->next)
        h = rte_hash_crc(rte_pktmbuf_mtod(s, const void*), s->data_len, h);
    return h;
}

}  // namespace

void Dedup::check_params(const ParamValues& p) {
    const uint64_t bytes = p.get_uint("copy_bytes");
    if (bytes != 0 && bytes < 64)
        p.fail("copy_bytes", "'copy_bytes' must be 0 (2048 bytes per window slot) or at least 64 bytes");
    const uint64_t window = p.get_uint("window");
    if (bytes == 0 && window * kDefaultBytesPerSlot > kMemoryMax)
        p.fail("window", "a window of " + std::to_string(window) + " frames at 2048 bytes each needs " +
                             std::to_string(window * kDefaultBytesPerSlot >> 30) + " GiB for their copies, more than " +
                             std::to_string(kMemoryMax >> 30) + " GiB: bound them with copy_bytes");
}

Dedup::Dedup(const ParamValues& p) : Stage(kKind) {
    check_params(p);
    duplicate_ = declare_drop("duplicate");
    too_long_ = declare_event("too_long");
    shortened_ = declare_event("window_shortened");
    const uint64_t window = p.get_uint("window");
    window_ = static_cast<uint32_t>(window);
    uint64_t bytes = p.get_uint("copy_bytes");
    if (bytes == 0) bytes = window * kDefaultBytesPerSlot;

    slots_.resize(window_);
    const uint32_t buckets = std::bit_ceil(std::max<uint32_t>(window_ * 2, 16));
    buckets_.assign(buckets, kNone);
    bucket_mask_ = buckets - 1;
    arena_.resize(bytes);
}

bool Dedup::is_duplicate(const rte_mbuf* m, uint32_t length, uint32_t hash) const {
    for (uint32_t i = buckets_[hash & bucket_mask_]; i != kNone; i = slots_[i].next) {
        const Slot& s = slots_[i];
        if (s.hash != hash || s.length != length || !still_stored(s)) continue;
        const uint8_t* copy = copy_of(s);
        uint32_t off = 0;
        bool equal = true;
        for (const rte_mbuf* seg = m; seg != nullptr && equal; seg = seg->next) {
            equal = std::memcmp(copy + off, rte_pktmbuf_mtod(seg, const void*), seg->data_len) == 0;
            off += seg->data_len;
        }
        if (equal) return true;
    }
    return false;
}

void Dedup::forget(uint32_t slot) {
    Slot& s = slots_[slot];
    if (!s.used) return;
    if (!still_stored(s)) count_event(shortened_);
    uint32_t* link = &buckets_[s.hash & bucket_mask_];
    while (*link != slot) link = &slots_[*link].next;
    *link = s.next;
    s.used = false;
}

void Dedup::remember(const rte_mbuf* m, uint32_t length, uint32_t hash) {
    const uint64_t size = arena_.size();
    if (length > size) {
        count_event(too_long_);
        return;
    }
    const uint32_t slot = next_slot_;
    forget(slot);  // the window's oldest frame leaves on time
    next_slot_ = next_slot_ + 1 == window_ ? 0 : next_slot_ + 1;
    // A copy never wraps: skip the arena's tail when the frame does not fit before the end.
    if (written_ % size + length > size) written_ += size - written_ % size;

    Slot& s = slots_[slot];
    s.start = written_;
    s.length = length;
    s.hash = hash;
    s.used = true;
    uint8_t* copy = arena_.data() + written_ % size;
    for (const rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
        std::memcpy(copy, rte_pktmbuf_mtod(seg, const void*), seg->data_len);
        copy += seg->data_len;
    }
    written_ += length;
    uint32_t& head = buckets_[hash & bucket_mask_];
    s.next = head;
    head = slot;
}

void Dedup::process(Burst& b) {
    uint16_t kept = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        const PacketDesc d = b.d[i];
        const uint32_t length = rte_pktmbuf_pkt_len(d.mbuf);
        const uint32_t hash = frame_hash(d.mbuf, length);
        if (is_duplicate(d.mbuf, length, hash)) {
            drop(d, duplicate_);
            continue;
        }
        remember(d.mbuf, length, hash);
        b.d[kept++] = d;
    }
    b.n = kept;
}

TILEPIPE_STAGE(Dedup, "dedup",
               "processor: drop frames identical to one of the last N frames passed "
               "(reason \"duplicate\")",
               param<uint64_t>("window", 1024,
                               "how many of the most recently passed distinct frames a frame is "
                               "compared with")
                   .between(1, kWindowMax),
               param<uint64_t>("copy_bytes", 0,
                               "bytes for the copies of the window's frames; 0 = 2048 per "
                               "window slot (too little shortens the window: event "
                               "\"window_shortened\")")
                   .between(0, kMemoryMax));

}  // namespace tp
