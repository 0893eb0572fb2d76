#include "framework/stage/stage.hpp"

#include <rte_mbuf.h>

#include <stdexcept>

#include "descriptors/mbuf_pool.hpp"

namespace tp {

const char* stage_kind_name(StageKind k) {
    switch (k) {
        case StageKind::Source: return "source";
        case StageKind::Processor: return "processor";
        case StageKind::Sink: return "sink";
    }
    return "?";
}

rte_mempool* packet_pool(const StageEnv& env) { return env.pool != nullptr ? env.pool->get() : nullptr; }

Stage::~Stage() = default;
void Stage::open(StageEnv&) {}
SourceStatus Stage::produce(Burst&) { return SourceStatus::Done; }
void Stage::process(Burst&) {}
void Stage::close() {}

uint16_t Stage::declare_drop(std::string reason) {
    if (drop_names_.size() == StageStats::kMaxReasons) throw std::logic_error("too many drop reasons");
    drop_names_.push_back(std::move(reason));
    return static_cast<uint16_t>(drop_names_.size() - 1);
}

uint16_t Stage::declare_event(std::string name) {
    if (event_names_.size() == StageStats::kMaxReasons) throw std::logic_error("too many events");
    event_names_.push_back(std::move(name));
    return static_cast<uint16_t>(event_names_.size() - 1);
}

void Stage::drop(const PacketDesc& d, uint16_t reason) {
    if (dropped_note_ != nullptr && dropped_note_->n < kBurstMax) {
        dropped_note_->reason[dropped_note_->n] = reason;
        dropped_note_->mbuf[dropped_note_->n++] = d.mbuf;
    }
    dropped_bytes_ += frame_length(d);  // before the free: a long frame's length is in its mbuf
    free_packet(d.mbuf);
    stats_.reason[reason].inc();
    stats_.drops.inc();
}

}  // namespace tp
