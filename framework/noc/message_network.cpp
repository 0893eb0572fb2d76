#include "framework/noc/message_network.hpp"

#include <optional>

namespace tp::noc {

MessageNetwork::MessageNetwork(const NetworkConfig& config, const std::vector<MemoryPlace>& tile_places)
    : config_(validated(config, kBackend)), ledger_(config_, kBackend), bound_(config_.tiles) {
    queues_.reserve(size_t{config_.tiles} * (config_.queues + 1));
    for (uint32_t t = 0; t < config_.tiles; ++t) {
        std::optional<tp::detail::NodeMemoryPlacement> placement;
        if (t < tile_places.size()) placement.emplace(tile_places[t]);
        for (uint32_t q = 0; q <= config_.queues; ++q) queues_.push_back(std::make_unique<TileQueue>(config_.words_of(t, q)));
        if (placement) bound_[t] = placement->areas();
    }
    tags_.reserve(config_.tiles);
    for (uint32_t t = 0; t < config_.tiles; ++t) tags_.emplace_back(catch_all());
}

void MessageNetwork::bind_tag(TileId tile, Tag tag, uint32_t queue_index) {
    detail::check_queue(config_, kBackend, tile, queue_index, false);
    tags_[tile].bind(tag, queue_index);
}

void MessageNetwork::unbind_tag(TileId tile, Tag tag) {
    detail::check_queue(config_, kBackend, tile, 0, false);
    tags_[tile].unbind(tag);
}

uint32_t MessageNetwork::queue_of(TileId tile, Tag tag) const {
    detail::check_queue(config_, kBackend, tile, 0, false);
    return tags_[tile].queue_of(tag);
}

void MessageNetwork::push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length,
                          const WaitPolicy& policy) {
    detail::check_push(config_, kBackend, from, to, length);
    const uint32_t qi = tags_[to].queue_of(tag);
    TileQueue& q = queue(to, qi);
    const uint32_t sole = q.sole_sender();
    detail::check_sender(kBackend, from, to, qi, sole);
    const uint64_t header = detail::pack_header(from, tag, length);
    auto attempt = [&] { return q.try_push(sole == from, header, payload, length); };
    if (!attempt()) {
        q.count_stall();  // once per push that had to wait
        policy.wait(attempt, [&](auto& again) {
            return park_on(config_.doorbells ? &q.space_bell() : nullptr, policy, again);
        });
    }
    if (config_.doorbells) q.data_bell().ring();
}

void MessageNetwork::pop(TileId tile, uint32_t queue_index, MessageHeader& header, uint64_t* payload,
                         const WaitPolicy& policy) {
    detail::check_queue(config_, kBackend, tile, queue_index, true);
    TileQueue& q = queue(tile, queue_index);
    uint64_t word = 0;
    policy.wait([&] { return q.try_pop(word, payload); },
                [&](auto& again) { return park_on(config_.doorbells ? &q.data_bell() : nullptr, policy, again); });
    header = detail::unpack_header(word);
    if (config_.doorbells) q.space_bell().ring();
}

void MessageNetwork::claim(TileId tile, uint32_t queue_index, TileId sender) {
    detail::check_push(config_, kBackend, sender, tile, 0);
    ledger_.claim(tile, queue_index, sender);
    queue(tile, queue_index).set_sole_sender(sender);
}

void MessageNetwork::claim_credited(TileId tile, uint32_t queue_index) {
    ledger_.claim_credited(tile, queue_index);
    queue(tile, queue_index).set_sole_sender(detail::kCreditedSenders);
}

void MessageNetwork::release_claim(TileId tile, uint32_t queue_index) {
    queue(tile, queue_index).set_sole_sender(ledger_.release_claim(tile, queue_index));
}

QueueCounters MessageNetwork::counters(TileId tile, uint32_t queue_index) const {
    detail::check_queue(config_, kBackend, tile, queue_index, true);
    const TileQueue& q = queue(tile, queue_index);
    return QueueCounters{q.messages(), q.words(), q.stalls()};
}

uint64_t MessageNetwork::queued_words(TileId tile, uint32_t queue_index) const {
    detail::check_queue(config_, kBackend, tile, queue_index, true);
    return queue(tile, queue_index).queued_words();
}

}  // namespace tp::noc
