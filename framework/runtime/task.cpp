#include "framework/runtime/task.hpp"

#include "descriptors/mbuf_pool.hpp"

namespace tp {

bool Task::poll_failed() {
    end_after_failure();
    return true;
}

void Task::drop_after_failure(const PacketDesc& d) {
    if (d.mbuf == nullptr) return;
    free_packet(d.mbuf);
    if (failed_) ++failure_drops_;
    else ++cut_drops_;
}

}  // namespace tp
