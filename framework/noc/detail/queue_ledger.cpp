#include "framework/noc/detail/queue_ledger.hpp"

#include <stdexcept>

namespace tp::noc::detail {

namespace {
std::string queue_name(uint32_t queues, TileId tile, uint32_t queue) {
    return "tile " + std::to_string(tile) + "'s " +
           (queue == queues ? std::string("catch-all") : "queue " + std::to_string(queue));
}
}  // namespace

QueueLedger::QueueLedger(const NetworkConfig& config, const char* backend)
    : config_(config),
      backend_(backend),
      reserved_(size_t{config.tiles} * (config.queues + 1), 0),
      sole_(reserved_.size(), kAnySender),
      credited_(reserved_.size(), 0) {}

void QueueLedger::reserve(TileId tile, uint32_t queue, uint64_t words, const std::string& who,
                          const std::string& hint) {
    check_queue(config_, backend_, tile, queue, true);
    std::lock_guard<std::mutex> lk(m_);
    uint64_t& r = reserved_[index(tile, queue)];
    const uint32_t holds = config_.words_of(tile, queue);
    if (r + words > holds) {
        std::string msg = who + " needs " + std::to_string(words) + " words in " +
                          queue_name(config_.queues, tile, queue) + ", which holds " + std::to_string(holds);
        if (r != 0) msg += " and has " + std::to_string(r) + " set aside for other interfaces already";
        if (!hint.empty()) msg += " (" + hint + ")";
        throw std::invalid_argument(msg);
    }
    r += words;
}

void QueueLedger::release(TileId tile, uint32_t queue, uint64_t words) {
    std::lock_guard<std::mutex> lk(m_);
    reserved_[index(tile, queue)] -= words;
}

uint64_t QueueLedger::reserved(TileId tile, uint32_t queue) const {
    check_queue(config_, backend_, tile, queue, true);
    std::lock_guard<std::mutex> lk(m_);
    return reserved_[index(tile, queue)];
}

void QueueLedger::claim(TileId tile, uint32_t queue, TileId sender) {
    check_queue(config_, backend_, tile, queue, true);
    std::lock_guard<std::mutex> lk(m_);
    const size_t i = index(tile, queue);
    if (sole_[i] != kAnySender)
        throw std::invalid_argument(std::string(backend_) + " network: " + queue_name(config_.queues, tile, queue) +
                                    " is claimed already (" +
                                    (sole_[i] == kCreditedSenders ? std::string("shared by credit interfaces")
                                                                  : "by an interface of sender tile " + std::to_string(sole_[i])) +
                                    "); an interface that owns a queue needs one of its own");
    sole_[i] = sender;
}

void QueueLedger::claim_credited(TileId tile, uint32_t queue) {
    check_queue(config_, backend_, tile, queue, true);
    std::lock_guard<std::mutex> lk(m_);
    const size_t i = index(tile, queue);
    if (sole_[i] != kAnySender && sole_[i] != kCreditedSenders)
        throw std::invalid_argument(std::string(backend_) + " network: " + queue_name(config_.queues, tile, queue) +
                                    " is claimed already (by an interface of sender tile " + std::to_string(sole_[i]) +
                                    "); credit interfaces that share a queue need one no interface owns");
    sole_[i] = kCreditedSenders;
    ++credited_[i];
}

uint32_t QueueLedger::release_claim(TileId tile, uint32_t queue) {
    std::lock_guard<std::mutex> lk(m_);
    const size_t i = index(tile, queue);
    if (sole_[i] == kCreditedSenders && --credited_[i] != 0) return kCreditedSenders;
    sole_[i] = kAnySender;
    return kAnySender;
}

void throw_bad_push(const NetworkConfig& c, const char* backend, TileId from, TileId to, uint32_t length) {
    const std::string who = std::string(backend) + " network: ";
    if (from >= c.tiles || to >= c.tiles)
        throw std::out_of_range(who + "push from tile " + std::to_string(from) + " to tile " + std::to_string(to) +
                                ", but the network has tiles 0.." + std::to_string(c.tiles - 1));
    throw std::invalid_argument(who + "a message carries at most " + std::to_string(c.max_payload) +
                                " payload words, got " + std::to_string(length));
}

void throw_bad_queue(const NetworkConfig& c, const char* backend, TileId tile, uint32_t queue) {
    const std::string who = std::string(backend) + " network: ";
    if (tile >= c.tiles)
        throw std::out_of_range(who + "tile " + std::to_string(tile) + " does not exist (tiles 0.." +
                                std::to_string(c.tiles - 1) + ")");
    throw std::out_of_range(who + "queue " + std::to_string(queue) + " does not exist (demux queues 0.." +
                            std::to_string(c.queues - 1) + ", catch-all " + std::to_string(c.queues) + ")");
}

void throw_claimed(const char* backend, TileId from, TileId to, uint32_t queue, uint32_t sole) {
    if (sole == kCreditedSenders)
        throw std::logic_error(std::string(backend) + " network: tile " + std::to_string(from) +
                               " pushed without a credit into tile " + std::to_string(to) + "'s queue " +
                               std::to_string(queue) + ", which credit interfaces share (every push there spends a credit)");
    if (sole == kAnySender)
        throw std::logic_error(std::string(backend) + " network: a credited push from tile " + std::to_string(from) +
                               " needs tile " + std::to_string(to) + "'s queue " + std::to_string(queue) +
                               " claimed by its sender, and it is not claimed");
    throw std::logic_error(std::string(backend) + " network: tile " + std::to_string(from) +
                           " pushed into tile " + std::to_string(to) + "'s queue " + std::to_string(queue) +
                           ", which sender tile " + std::to_string(sole) + " claimed for a credit interface");
}

}  // namespace tp::noc::detail
