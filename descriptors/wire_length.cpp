#include "descriptors/wire_length.hpp"

#include <mutex>

#include "descriptors/dynfield.hpp"

namespace tp {

int wire_length_offset() {
    static std::once_flag once;
    static int offset = -1;
    std::call_once(once, [] { offset = register_uint32_field("tilepipe_dynfield_wire_length", "wire lengths"); });
    return offset;
}

}  // namespace tp
