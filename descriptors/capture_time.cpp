#include "descriptors/capture_time.hpp"

#include <rte_errno.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace tp {

CaptureTimeField capture_time_field() {
    static std::once_flag once;
    static CaptureTimeField field;
    std::call_once(once, [] {
        const rte_mbuf_dynfield spec{"tilepipe_dynfield_capture_ns", sizeof(uint64_t), alignof(uint64_t), 0};
        const rte_mbuf_dynflag flag{"tilepipe_dynflag_capture_ns", 0};
        const int offset = rte_mbuf_dynfield_register(&spec);
        const int bit = rte_mbuf_dynflag_register(&flag);
        if (offset < 0 || bit < 0)
            throw std::runtime_error(std::string("cannot register the mbuf field for capture times: ") +
                                     rte_strerror(rte_errno));
        field = CaptureTimeField{offset, uint64_t{1} << bit};
    });
    return field;
}

}  // namespace tp
