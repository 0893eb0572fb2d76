// CreditChannel<Net>: the paper's symmetric communication interface on a messaging network:
// one sender tile, one receiver tile, K credits.
//
// Set-up: the data tag is bound to `data_queue` at the receiver and the ack tag to
// `ack_queue` at the sender; K x (1 + payload_words) words of the data queue and K words of
// the ack queue are set aside, so K must satisfy K x (1 + payload_words) <= queue_words
// (K <= 64 for one-word messages in a 128-word queue), or the constructor throws
// std::invalid_argument saying so; then the receiver sends its K credits. A send pops a
// credit and pushes the message; a receive pops the message and owes a credit, pushed back
// with the others owed once they make a quarter of K, at once below K = 8 (CreditSender,
// CreditReceiver). Both queues must be the interface's own: they are claimed
// for their one sender (no other tile may push there, and the pushes skip the CAS; see
// TileQueue); use LogicalChannel to share a queue.
//
// Ordering: FIFO, exactly once. Thread-safety: sender() on the sender tile's thread,
// receiver() on the receiver tile's. Destroy it when both ends are idle: it drains what is
// left in its queues and gives the tags and the room back.
#pragma once

#include <cstdint>
#include <string>

#include "framework/noc/credit_receiver.hpp"
#include "framework/noc/credit_sender.hpp"
#include "framework/noc/detail/credit_setup.hpp"
#include "framework/noc/network_config.hpp"

namespace tp::noc {

struct CreditChannelConfig {
    TileId sender = 0;
    TileId receiver = 1;
    uint32_t data_queue = 0;  // at the receiver
    uint32_t ack_queue = 0;   // at the sender
    Tag data_tag = 1;
    Tag ack_tag = 2;
    uint32_t credits = 8;     // K
    uint32_t payload_words = 1;
};

template <typename Net>
class CreditChannel {
public:
    CreditChannel(Net& net, const CreditChannelConfig& c)
        : net_(net),
          config_(checked(c)),
          data_binding_(net, c.receiver, c.data_tag, c.data_queue),
          ack_binding_(net, c.sender, c.ack_tag, c.ack_queue),
          data_room_(net, c.receiver, c.data_queue, uint64_t{c.credits} * (1 + c.payload_words), who(c),
                     "K <= " + std::to_string(net.config().queue_words) + "/" + std::to_string(1 + c.payload_words) +
                         " = " + std::to_string(net.config().queue_words / (1 + c.payload_words))),
          ack_room_(net, c.sender, c.ack_queue, uint64_t{kCreditWords} * c.credits, who(c) + " (its credits)",
                    "K <= " + std::to_string(net.config().queue_words) + "/" + std::to_string(kCreditWords) + " = " +
                        std::to_string(net.config().queue_words / kCreditWords)),
          data_claim_(net, c.receiver, c.data_queue, c.sender),
          ack_claim_(net, c.sender, c.ack_queue, c.receiver),
          sender_(net, c.sender, c.receiver, c.data_tag, c.ack_tag, Inbox<Net>(net, c.sender, c.ack_queue),
                  c.payload_words, true),
          receiver_(net, c.receiver, c.data_tag, c.ack_tag, Inbox<Net>(net, c.receiver, c.data_queue),
                    c.payload_words, true) {
        receiver_.grant(c.sender, c.credits);
    }

    ~CreditChannel() {
        MessageHeader h;
        uint64_t scratch[kMaxPayload];
        while (net_.try_pop(config_.receiver, config_.data_queue, h, scratch)) {
        }
        while (net_.try_pop(config_.sender, config_.ack_queue, h, scratch)) {
        }
    }
    CreditChannel(const CreditChannel&) = delete;
    CreditChannel& operator=(const CreditChannel&) = delete;

    CreditSender<Net>& sender() { return sender_; }
    CreditReceiver<Net>& receiver() { return receiver_; }
    const CreditChannelConfig& config() const { return config_; }
    uint32_t credits() const { return config_.credits; }

private:
    static const CreditChannelConfig& checked(const CreditChannelConfig& c) {
        detail::check_credits("credit channel", c.credits, c.payload_words);
        return c;
    }
    static std::string who(const CreditChannelConfig& c) {
        return "credit channel: K = " + std::to_string(c.credits) + " credits of (1 + " +
               std::to_string(c.payload_words) + ")-word messages";
    }

    Net& net_;
    CreditChannelConfig config_;
    detail::TagBinding<Net> data_binding_;
    detail::TagBinding<Net> ack_binding_;
    detail::RoomReservation<Net> data_room_;
    detail::RoomReservation<Net> ack_room_;
    detail::QueueClaim<Net> data_claim_;  // each queue has one sender: its pushes skip the CAS
    detail::QueueClaim<Net> ack_claim_;
    CreditSender<Net> sender_;
    CreditReceiver<Net> receiver_;
};

}  // namespace tp::noc
