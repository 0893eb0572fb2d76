// Registering a 32-bit mbuf dynamic field (a packet's wire length, an ordered farm's sequence
// number, a trace number): its offset in every mbuf, or an error naming the field.
#pragma once

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace tp {

// Registers field `name` (after EAL is up); `what` names it in the error ("wire lengths").
inline int register_uint32_field(const char* name, const char* what) {
    rte_mbuf_dynfield spec{};
    std::snprintf(spec.name, sizeof spec.name, "%s", name);
    spec.size = sizeof(uint32_t);
    spec.align = alignof(uint32_t);
    const int offset = rte_mbuf_dynfield_register(&spec);
    if (offset < 0)
        throw std::runtime_error(std::string("cannot register the mbuf field for ") + what + ": " + rte_strerror(rte_errno));
    return offset;
}

}  // namespace tp
