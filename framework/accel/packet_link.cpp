#include "framework/accel/packet_link.hpp"

#include <atomic>

namespace tp {

namespace {
// Written by the thread holding bind_mutex(); atomic because `tilepipe validate`-style checks
// on another thread may read it meanwhile (they then see either value, both meaningful).
std::atomic<PacketLink*> g_bound{nullptr};
}  // namespace

std::mutex& bind_mutex() {
    static std::mutex m;
    return m;
}

PacketLink* bound_link() { return g_bound.load(std::memory_order_acquire); }

void set_bound_link(PacketLink* link) { g_bound.store(link, std::memory_order_release); }

}  // namespace tp
