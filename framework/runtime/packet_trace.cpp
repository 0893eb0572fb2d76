#include "framework/runtime/packet_trace.hpp"

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "descriptors/dynfield.hpp"

namespace tp {

namespace {
int trace_field_offset() {
    static std::once_flag once;
    static int offset = -1;
    std::call_once(once, [] { offset = register_uint32_field("tilepipe_dynfield_trace", "trace numbers"); });
    return offset;
}
}  // namespace

const char* trace_step_name(TraceStep s) {
    switch (s) {
        case TraceStep::Emitted: return "emitted";
        case TraceStep::Passed: return "passed";
        case TraceStep::Delivered: return "delivered";
        case TraceStep::Dropped: return "dropped";
        case TraceStep::Held: return "held";
    }
    return "?";
}

PacketTrace::PacketTrace(uint32_t packets) : packets_(packets), offset_(trace_field_offset()) {}

void PacketTrace::clear_pool(rte_mempool* pool) const {
    rte_mempool_obj_iter(
        pool,
        [](rte_mempool*, void* offset, void* obj, unsigned) {
            *RTE_MBUF_DYNFIELD(static_cast<rte_mbuf*>(obj), *static_cast<int*>(offset), uint32_t*) = 0;
        },
        const_cast<int*>(&offset_));
}

uint32_t& NodeTrace::number_of(const void* mbuf) const {
    return *RTE_MBUF_DYNFIELD(static_cast<rte_mbuf*>(const_cast<void*>(mbuf)), trace_.offset_, uint32_t*);
}

void NodeTrace::note(uint32_t packet, uint16_t stage, TraceStep step, uint16_t reason, uint64_t tsc) {
    events_.push_back(TraceEvent{tsc, packet, stage, reason, step});
    if (step != TraceStep::Passed && step != TraceStep::Emitted) trace_.in_flight_.fetch_sub(1, std::memory_order_relaxed);
}

void NodeTrace::emitted(const Burst& b, uint64_t tsc) {
    for (const PacketDesc& d : b) {
        if (trace_.next_.load(std::memory_order_relaxed) >= trace_.packets_) return;
        const uint32_t packet = trace_.next_.fetch_add(1, std::memory_order_relaxed);
        if (packet >= trace_.packets_) return;  // another source took the last number
        trace_.in_flight_.fetch_add(1, std::memory_order_relaxed);
        number_of(d.mbuf) = packet + 1;
        note(packet, 0, TraceStep::Emitted, 0, tsc);
    }
}

void NodeTrace::before(const Burst& b) {
    n_ = 0;
    dropped_.n = 0;
    for (const PacketDesc& d : b) {
        if (d.mbuf == nullptr) continue;  // an ordered farm's hole
        uint32_t& number = number_of(d.mbuf);
        if (number == 0) continue;
        mbuf_[n_] = d.mbuf;
        packet_[n_++] = number - 1;
        number = 0;
    }
}

void NodeTrace::after(const Burst& b, uint16_t stage, bool sink, uint64_t tsc) {
    for (uint16_t i = 0; i < n_; ++i) {
        bool dropped = false;
        for (uint16_t k = 0; k < dropped_.n && !dropped; ++k)
            if (dropped_.mbuf[k] == mbuf_[i]) {
                note(packet_[i], stage, TraceStep::Dropped, dropped_.reason[k], tsc);
                dropped = true;
            }
        if (dropped) continue;
        if (sink) {
            note(packet_[i], stage, TraceStep::Delivered, 0, tsc);
            continue;
        }
        bool kept = false;
        for (const PacketDesc& d : b)
            if (d.mbuf == mbuf_[i]) {
                kept = true;
                break;
            }
        if (kept) number_of(mbuf_[i]) = packet_[i] + 1;
        note(packet_[i], stage, kept ? TraceStep::Passed : TraceStep::Held, 0, tsc);
    }
    n_ = 0;
}

}  // namespace tp
