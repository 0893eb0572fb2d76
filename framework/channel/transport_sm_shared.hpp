// SmSharedChannel<T>: transport `sm_shared`, the paper's interface with every field of a slot
// {ready, ack, msg} on one cache line.
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

    std::atomic<uint64_t>& ready(uint32_t i) { return slots_[i].ready; }
    T& msg(uint32_t i) { return slots_[i].msg; }
    std::atomic<uint64_t>& ack(uint32_t i) { return slots_[i].ack; }
    const std::atomic<uint64_t>& ready(uint32_t i) const { return slots_[i].ready; }
    const std::atomic<uint64_t>& ack(uint32_t i) const { return slots_[i].ack; }

private:
    struct alignas(detail::kCacheLine) Slot {
        std::atomic<uint64_t> ready{0};
        std::atomic<uint64_t> ack{0};
        T msg{};
    };
    static_assert(sizeof(Slot) == detail::kCacheLine, "{ready, ack, msg} must fit one cache line");

    detail::NodeMemory mem_;
    Slot* slots_;
};

template <typename T>
using SmSharedChannel = SmChannel<T, SmSharedLayout<T>>;

}  // namespace tp
