// PortGroups: a burst's descriptors sorted by their output port (PacketDesc::port), stably,
// into one run per port, so a sink that sends by port makes one call per port per burst.
//
// Fixed arrays only: sorting allocates nothing, and costs two passes over the burst plus a
// 128-byte reset of the port map. Groups come in the order their ports first appear.
#pragma once

#include <cstdint>
#include <cstring>

#include "descriptors/burst.hpp"

namespace tp {

struct PortGroups {
    static constexpr unsigned kPorts = PacketDesc::kPortMax + 1u;  // PacketDesc::port's range

    struct Group {
        uint8_t port;
        uint16_t begin, end;  // [begin, end) in d
    };

    PacketDesc d[kBurstMax];
    Group group[kBurstMax];
    uint16_t groups = 0;

    void sort(const Burst& b) {
        uint8_t slot[kPorts];  // group index of each port in this burst, kNone when absent
        uint8_t of[kBurstMax];  // group index of each packet
        uint16_t count[kBurstMax];
        std::memset(slot, kNone, sizeof slot);
        groups = 0;
        for (uint16_t i = 0; i < b.n; ++i) {
            const uint8_t p = b.d[i].port;
            if (slot[p] == kNone) {
                slot[p] = static_cast<uint8_t>(groups);
                group[groups].port = p;
                count[groups++] = 0;
            }
            of[i] = slot[p];
            ++count[of[i]];
        }
        uint16_t at = 0;
        for (uint16_t g = 0; g < groups; ++g) {
            group[g].begin = group[g].end = at;
            at = static_cast<uint16_t>(at + count[g]);
        }
        for (uint16_t i = 0; i < b.n; ++i) d[group[of[i]].end++] = b.d[i];
    }

private:
    static constexpr uint8_t kNone = 0xff;  // a burst has at most 32 groups
};

}  // namespace tp
