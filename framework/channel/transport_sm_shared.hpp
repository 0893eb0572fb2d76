// SmSharedChannel<T>: transport `sm_shared`, the paper's interface with every field of a slot
// {ready, ack, messages} on one cache line.
//
// Same protocol, ordering and thread-safety as `sm` (transport_sm.hpp); only the layout
// differs. It is the baseline that shows why the split matters: here the receiver's ack and
// the sender's ready/msg write the same line, so each message moves that line back and forth
// between the two caches one more time than in `sm`.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "framework/channel/detail/cache_line.hpp"
#include "framework/channel/detail/node_memory.hpp"
#include "framework/channel/transport_sm.hpp"

namespace tp {

template <typename T>
class SmSharedLayout {
public:
    static constexpr const char* kName = "sm_shared";

    SmSharedLayout(uint32_t k, int socket) : mem_(sizeof(Slot) * k, socket) {
        slots_ = static_cast<Slot*>(mem_.get());
        for (uint32_t i = 0; i < k; ++i) new (&slots_[i]) Slot{};
    }

private:
    // The items start at the first offset past the two words that T's alignment allows.
    static constexpr size_t kItemsAt = (2 * sizeof(uint64_t) + alignof(T) - 1) / alignof(T) * alignof(T);

public:
    static constexpr uint32_t kPerSlot = (detail::kCacheLine - kItemsAt) / sizeof(T);
    static_assert(kPerSlot >= 1, "{ready, ack, an item} must fit one cache line");

    std::atomic<uint64_t>& ready(uint32_t i) { return slots_[i].ready; }
    T* msgs(uint32_t i) { return slots_[i].msgs; }
    std::atomic<uint64_t>& ack(uint32_t i) { return slots_[i].ack; }
    const std::atomic<uint64_t>& ready(uint32_t i) const { return slots_[i].ready; }
    const T* msgs(uint32_t i) const { return slots_[i].msgs; }
    const std::atomic<uint64_t>& ack(uint32_t i) const { return slots_[i].ack; }

private:
    struct alignas(detail::kCacheLine) Slot {
        std::atomic<uint64_t> ready{0};
        std::atomic<uint64_t> ack{0};
        T msgs[kPerSlot]{};
    };
    static_assert(sizeof(Slot) == detail::kCacheLine, "{ready, ack, messages} must fit one cache line");

    detail::NodeMemory mem_;
    Slot* slots_;
};

template <typename T>
using SmSharedChannel = SmChannel<T, SmSharedLayout<T>>;

}  // namespace tp
