// TagTable: a tile's demultiplexing table, tag -> queue. A tag bound to a queue lands there;
// any other tag lands in the catch-all, as the UDN's demux does in hardware.
//
// One byte per possible tag (64 KiB per tile), so a lookup is one load that stays in the
// sender's cache. Binding while messages flow is allowed: a message goes where the table
// said when it was pushed. Thread-safety: lookups from any thread, concurrent with binds.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "framework/noc/network_config.hpp"

namespace tp::noc {

class TagTable {
public:
    explicit TagTable(uint32_t catch_all) : catch_all_(catch_all), map_(new std::atomic<uint8_t>[65536]()) {}

    // relaxed: the entry is the whole message; nothing else is read through it.
    void bind(Tag tag, uint32_t queue) { map_[tag].store(static_cast<uint8_t>(queue + 1), std::memory_order_relaxed); }
    void unbind(Tag tag) { map_[tag].store(0, std::memory_order_relaxed); }

    uint32_t queue_of(Tag tag) const {
        const uint8_t q = map_[tag].load(std::memory_order_relaxed);  // relaxed: see bind
        return q == 0 ? catch_all_ : q - 1u;
    }

private:
    uint32_t catch_all_;
    std::unique_ptr<std::atomic<uint8_t>[]> map_;  // 0: unbound, else queue + 1
};

}  // namespace tp::noc
