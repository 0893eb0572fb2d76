#include "descriptors/capture_time.hpp"

#include <mutex>

#include "descriptors/dynfield.hpp"

namespace tp {

CaptureTimeField capture_time_field() {
    static std::once_flag once;
    static CaptureTimeField field;
    std::call_once(once, [] {
        field = CaptureTimeField{register_field("tilepipe_dynfield_capture_ns", sizeof(uint64_t), alignof(uint64_t), "capture times"),
                                 register_flag("tilepipe_dynflag_capture_ns", "capture times")};
    });
    return field;
}

}  // namespace tp
