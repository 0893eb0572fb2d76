#include "framework/runtime/sequence_field.hpp"

#include <rte_mbuf_dyn.h>

#include <mutex>

#include "descriptors/dynfield.hpp"

namespace tp {

int sequence_field_offset() {
    static std::once_flag once;
    static int offset = -1;
    std::call_once(once, [] { offset = register_uint32_field("tilepipe_dynfield_sequence", "sequence numbers"); });
    return offset;
}

}  // namespace tp
