// Registering an mbuf dynamic field (a packet's wire length, an ordered farm's sequence
// number, a trace number, a capture time) or flag: its offset in every mbuf (its bit in
// ol_flags), or an error naming what it is for.
#pragma once

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace tp {

// Registers field `name` of `size` bytes (after EAL is up); `what` names it in the error
// ("wire lengths").
inline int register_field(const char* name, size_t size, size_t align, const char* what) {
    rte_mbuf_dynfield spec{};
    std::snprintf(spec.name, sizeof spec.name, "%s", name);
    spec.size = size;
    spec.align = align;
    const int offset = rte_mbuf_dynfield_register(&spec);
    if (offset < 0)
        throw std::runtime_error(std::string("cannot register the mbuf field for ") + what + ": " + rte_strerror(rte_errno));
    return offset;
}

inline int register_uint32_field(const char* name, const char* what) {
    return register_field(name, sizeof(uint32_t), alignof(uint32_t), what);
}

// Registers flag `name`: its bit in ol_flags as a mask.
inline uint64_t register_flag(const char* name, const char* what) {
    rte_mbuf_dynflag spec{};
    std::snprintf(spec.name, sizeof spec.name, "%s", name);
    const int bit = rte_mbuf_dynflag_register(&spec);
    if (bit < 0)
        throw std::runtime_error(std::string("cannot register the mbuf flag for ") + what + ": " + rte_strerror(rte_errno));
    return uint64_t{1} << bit;
}

}  // namespace tp
