#include "descriptors/wire_length.hpp"

#include <rte_errno.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace tp {

int wire_length_offset() {
    static std::once_flag once;
    static int offset = -1;
    std::call_once(once, [] {
        const rte_mbuf_dynfield spec{"tilepipe_dynfield_wire_length", sizeof(uint32_t), alignof(uint32_t), 0};
        offset = rte_mbuf_dynfield_register(&spec);
        if (offset < 0)
            throw std::runtime_error(std::string("cannot register the mbuf field for wire lengths: ") +
                                     rte_strerror(rte_errno));
    });
    return offset;
}

}  // namespace tp
