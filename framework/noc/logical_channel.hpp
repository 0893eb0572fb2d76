// LogicalChannel<Net>: a symmetric credit interface whose data and credits travel through
// queues shared with other logical channels, told apart by tag (QueueDemux), so a tile can
// have more interfaces than physical queues.
//
// The receiver's data queue and the sender's ack queue are the demuxes' queues; the tags are
// bound to them (or left unbound when the queue is the catch-all). Room is set aside as for
// CreditChannel, so the channels sharing a queue must together fit it: with one-word
// messages in a 128-word queue, L channels of K credits need 2 x L x K <= 128. What sharing
// costs shows in QueueDemux::set_aside(), in the CAS every push into a shared queue pays (a
// queue several tiles may send to cannot be claimed) and in the `udn_logical` bench rows.
//
// Ordering: FIFO, exactly once. Thread-safety: sender() on the sender tile's thread (which
// owns `acks`), receiver() on the receiver tile's (which owns `data`).
#pragma once

#include <cstdint>
#include <string>

#include "framework/noc/credit_receiver.hpp"
#include "framework/noc/credit_sender.hpp"
#include "framework/noc/detail/credit_setup.hpp"
#include "framework/noc/queue_demux.hpp"

namespace tp::noc {

struct LogicalChannelConfig {
    Tag data_tag = 1;
    Tag ack_tag = 2;
    uint32_t credits = 4;  // K
    uint32_t payload_words = 1;
};

template <typename Net>
class LogicalChannel {
public:
    // `data`: the demux of the receiver's shared queue; `acks`: of the sender's.
    LogicalChannel(QueueDemux<Net>& data, QueueDemux<Net>& acks, const LogicalChannelConfig& c)
        : config_(checked(c)),
          data_binding_(data.network(), data.tile(), c.data_tag, data.queue()),
          ack_binding_(acks.network(), acks.tile(), c.ack_tag, acks.queue()),
          data_room_(data.network(), data.tile(), data.queue(), uint64_t{c.credits} * (1 + c.payload_words),
                     "logical channel (tag " + std::to_string(c.data_tag) + "): K = " + std::to_string(c.credits) +
                         " credits of (1 + " + std::to_string(c.payload_words) + ")-word messages",
                     "the channels sharing a queue need sum of K x (1 + payload words) <= queue_words"),
          ack_room_(acks.network(), acks.tile(), acks.queue(), uint64_t{kCreditWords} * c.credits,
                    "logical channel (tag " + std::to_string(c.ack_tag) + "): K = " + std::to_string(c.credits) +
                        " credits",
                    "the channels sharing a queue need sum of " + std::to_string(kCreditWords) + " x K <= queue_words"),
          data_share_(data, c.data_tag, c.credits, c.payload_words),
          ack_share_(acks, c.ack_tag, c.credits, 1),  // a credit message: its count
          sender_(acks.network(), acks.tile(), data.tile(), c.data_tag, c.ack_tag,
                  Inbox<Net>(acks.network(), acks.tile(), acks.queue(), &acks, ack_share_.handle), c.payload_words,
                  false),  // shared queues: ordinary pushes
          receiver_(data.network(), data.tile(), c.data_tag, c.ack_tag,
                    Inbox<Net>(data.network(), data.tile(), data.queue(), &data, data_share_.handle),
                    c.payload_words, false) {
        receiver_.grant(acks.tile(), c.credits);
    }
    LogicalChannel(const LogicalChannel&) = delete;
    LogicalChannel& operator=(const LogicalChannel&) = delete;

    CreditSender<Net>& sender() { return sender_; }
    CreditReceiver<Net>& receiver() { return receiver_; }
    const LogicalChannelConfig& config() const { return config_; }

private:
    static const LogicalChannelConfig& checked(const LogicalChannelConfig& c) {
        detail::check_credits("logical channel", c.credits, c.payload_words);
        return c;
    }

    // A tag attached to a demux for the channel's lifetime.
    struct Share {
        Share(QueueDemux<Net>& d, Tag t, uint32_t credits, uint32_t words)
            : demux(&d), tag(t), handle(d.attach(t, credits, words)) {}
        ~Share() { demux->detach(tag); }
        Share(const Share&) = delete;
        Share& operator=(const Share&) = delete;
        QueueDemux<Net>* demux;
        Tag tag;
        uint32_t handle;
    };

    LogicalChannelConfig config_;
    detail::TagBinding<Net> data_binding_;
    detail::TagBinding<Net> ack_binding_;
    detail::RoomReservation<Net> data_room_;
    detail::RoomReservation<Net> ack_room_;
    Share data_share_;
    Share ack_share_;
    CreditSender<Net> sender_;
    CreditReceiver<Net> receiver_;
};

}  // namespace tp::noc
