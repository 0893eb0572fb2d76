// Construction-time checks shared by the transports: a clear std::invalid_argument naming the
// transport and the rule, so the config layer can prefix it with the link's file:line:col.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tp::detail {

// Most slots any channel may have (sm uses two cache lines per slot: 2 GiB at this limit).
inline constexpr uint32_t kMaxCapacity = 1u << 24;

inline uint32_t checked_capacity(const char* transport, uint32_t capacity, bool power_of_two) {
    const std::string who = std::string(transport) + " channel: ";
    if (capacity == 0)
        throw std::invalid_argument(who + "capacity (K) must be at least 1, got 0");
    if (capacity > kMaxCapacity)
        throw std::invalid_argument(who + "capacity (K) must be at most " + std::to_string(kMaxCapacity) +
                                    ", got " + std::to_string(capacity));
    if (power_of_two && (capacity & (capacity - 1)) != 0)
        throw std::invalid_argument(who + "capacity (K) must be a power of two, got " + std::to_string(capacity));
    return capacity;
}

}  // namespace tp::detail
