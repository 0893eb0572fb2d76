#include "framework/metrics/packet_timestamp.hpp"

#include <rte_errno.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

namespace tp {

namespace {
int register_tsc_field(const char* name) {
    const rte_mbuf_dynfield spec{"", sizeof(uint64_t), alignof(uint64_t), 0};
    rte_mbuf_dynfield named = spec;
    std::snprintf(named.name, sizeof named.name, "%s", name);
    const int offset = rte_mbuf_dynfield_register(&named);
    if (offset < 0)
        throw std::runtime_error(std::string("cannot register the mbuf field ") + name + ": " + rte_strerror(rte_errno));
    return offset;
}
}  // namespace

uint64_t entry_sampled_flag() {
    static std::once_flag once;
    static uint64_t mask = 0;
    std::call_once(once, [] {
        rte_mbuf_dynflag spec{};
        std::snprintf(spec.name, sizeof spec.name, "%s", "tilepipe_dynflag_entry_sampled");
        const int bit = rte_mbuf_dynflag_register(&spec);
        if (bit < 0)
            throw std::runtime_error(std::string("cannot register the mbuf flag tilepipe_dynflag_entry_sampled: ") +
                                     rte_strerror(rte_errno));
        mask = uint64_t{1} << bit;
    });
    return mask;
}

int entry_tsc_offset() {
    static std::once_flag once;
    static int offset = -1;
    std::call_once(once, [] { offset = register_tsc_field("tilepipe_dynfield_entry_tsc"); });
    return offset;
}

int handoff_tsc_offset() {
    static std::once_flag once;
    static int offset = -1;
    std::call_once(once, [] { offset = register_tsc_field("tilepipe_dynfield_handoff_tsc"); });
    return offset;
}

}  // namespace tp
