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
