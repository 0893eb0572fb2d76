// QueueDemux<Net>: lets several logical channels share one physical queue of a tile, so a
// tile can have more interfaces than it has queues (the paper's proposed future work).
//
// Each logical channel attaches with its tag and how many messages it may have in flight
// (its credits). A receive for tag t first takes what was set aside for t earlier; then it
// pops the physical queue, returning the first message tagged t and setting every other
// message aside for its own channel. Credits bound what can be set aside, so the per-tag
// stores never overflow; a message whose tag no channel attached is kept as unclaimed.
// What multiplexing costs: a receive may pop and copy messages for other channels, which
// are then copied again when their channel asks (set_aside() counts them).
//
// Ordering: per tag, messages keep their order in the physical queue. Thread-safety: the
// thread that drives the tile owns the demux.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/noc/network_config.hpp"

namespace tp::noc {

template <typename Net>
class QueueDemux {
public:
    // Throws std::out_of_range for a tile or queue that does not exist.
    QueueDemux(Net& net, TileId tile, uint32_t queue)
        : net_(net), tile_(tile), queue_(queue), mailbox_(net.mailbox(tile, queue)) {}
    QueueDemux(const QueueDemux&) = delete;
    QueueDemux& operator=(const QueueDemux&) = delete;

    Net& network() const { return net_; }
    TileId tile() const { return tile_; }
    uint32_t queue() const { return queue_; }

    // A logical channel for `tag`: at most `max_messages` in flight, `payload_words` each.
    // Returns the handle try_pop takes. Throws std::invalid_argument if `tag` is attached.
    uint32_t attach(Tag tag, uint32_t max_messages, uint32_t payload_words) {
        if (index_.count(tag) != 0)
            throw std::invalid_argument("logical channel: tag " + std::to_string(tag) + " is already attached to tile " +
                                        std::to_string(tile_) + "'s queue " + std::to_string(queue_));
        const auto handle = static_cast<uint32_t>(stores_.size());
        stores_.push_back(Store{tag, payload_words, max_messages,
                                std::vector<uint64_t>(size_t{max_messages} * (1 + payload_words)), 0, 0, true});
        index_[tag] = handle;
        return handle;
    }

    // Forgets `tag`'s channel and whatever was set aside for it.
    void detach(Tag tag) {
        auto it = index_.find(tag);
        if (it == index_.end()) return;
        Store& s = stores_[it->second];
        s.attached = false;
        s.ring.clear();
        s.head = s.tail = 0;
        index_.erase(it);
    }

    // The next message tagged like `handle`'s channel; false when there is none yet.
    // `payload` needs room for kMaxPayload words.
    bool try_pop(uint32_t handle, MessageHeader& header, uint64_t* payload) {
        Store& s = stores_[handle];
        if (s.head != s.tail) {
            const uint64_t* m = &s.ring[(s.head % s.max_messages) * (1 + s.words)];
            header = MessageHeader{static_cast<TileId>(m[0] >> 32), s.tag, s.words};
            std::memcpy(payload, m + 1, sizeof(uint64_t) * s.words);
            ++s.head;
            return true;
        }
        while (net_.try_pop(mailbox_, header, payload)) {
            if (header.tag == s.tag && header.length == s.words) return true;
            set_aside(header, payload);
        }
        return false;
    }

    // Messages whose tag no channel attached (or that did not fit their channel), oldest first.
    bool try_pop_unclaimed(MessageHeader& header, uint64_t* payload) {
        if (unclaimed_.empty()) return false;
        header = unclaimed_.front().header;
        std::memcpy(payload, unclaimed_.front().words.data(), sizeof(uint64_t) * header.length);
        unclaimed_.pop_front();
        return true;
    }

    uint64_t set_aside() const { return set_aside_; }  // messages kept for another channel so far
    size_t unclaimed() const { return unclaimed_.size(); }

private:
    struct Store {
        Tag tag;
        uint32_t words;         // payload words per message
        uint32_t max_messages;  // its credits
        std::vector<uint64_t> ring;  // per message: source << 32, then the payload
        uint64_t head, tail;
        bool attached;
    };
    struct Unclaimed {
        MessageHeader header;
        std::vector<uint64_t> words;
    };

    void set_aside(const MessageHeader& h, const uint64_t* payload) {
        ++set_aside_;
        auto it = index_.find(h.tag);
        if (it != index_.end()) {
            Store& s = stores_[it->second];
            if (h.length == s.words && s.tail - s.head < s.max_messages) {
                uint64_t* m = &s.ring[(s.tail % s.max_messages) * (1 + s.words)];
                m[0] = uint64_t{h.source} << 32;
                std::memcpy(m + 1, payload, sizeof(uint64_t) * s.words);
                ++s.tail;
                return;
            }
        }
        unclaimed_.push_back(Unclaimed{h, std::vector<uint64_t>(payload, payload + h.length)});
    }

    Net& net_;
    const TileId tile_;
    const uint32_t queue_;
    const typename Net::Mailbox mailbox_;
    std::vector<Store> stores_;                  // by handle
    std::unordered_map<Tag, uint32_t> index_;   // attached tag -> handle
    std::deque<Unclaimed> unclaimed_;
    uint64_t set_aside_ = 0;
};

}  // namespace tp::noc
