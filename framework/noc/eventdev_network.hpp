// EventdevNetwork: the messaging network's second backend, on a DPDK event device: the
// software `event_sw` here, a hardware queue manager (DLB2, OCTEON SSO) in deployment. It has
// MessageNetwork's API and promises, so the credit interfaces and the `udn_eventdev`
// transport run on it unchanged.
//
// Mapping: every (tile, queue) is a single-link event queue with its own directed port, so
// the device's scheduler does the demultiplexing the UDN switch does; a tile pushes through
// its catch-all's port. A message is one event, hence atomic: the header rides in the
// event's flow id and sub-event type fields (tag, length, source tile), a one-word payload
// in its 64-bit word, a longer one in a buffer from the sender's PayloadPool whose address
// the word carries. Queue capacity is accounted here, in words, as in MessageNetwork (the
// device only bounds events in flight device-wide); a push the device refuses counts as a
// stall, like a full queue.
//
// Why event_sw and not event_dsw: DSW offers 16 event queues per device (one per tile and
// queue would allow 3 tiles) and needs every port dequeued regularly for its flow migration,
// which a parked tile does not do.
//
// Scheduling: no service core runs event_sw's scheduler here; a pop that finds its port
// empty runs one scheduler iteration itself (rte_service_run_iter_on_app_lcore, serialised
// by EAL, so concurrent pollers just skip it). Its cost grows with the number of ports.
// Limits: tiles x (queues + 1) <= 64 ports (event_sw), at most 256 tiles, at most 16 such
// networks alive per process (event devices; see detail/event_device_pool.hpp), and EAL must
// be running. Thread-safety: an event port is single-threaded, so one thread at a time pops
// a given queue, and one thread at a time makes a tile's pushes and pops its catch-all
// (they share the catch-all's port); a thread is registered with EAL on first use.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/metrics/relaxed_counter.hpp"
#include "framework/noc/detail/payload_pool.hpp"
#include "framework/noc/detail/queue_ledger.hpp"
#include "framework/noc/network_config.hpp"
#include "framework/noc/tag_table.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp::noc {

class EventdevNetwork {
public:
    static constexpr const char* kBackend = "eventdev";

    // Throws std::invalid_argument for a bad config (or one the device cannot hold) and when
    // EAL is not running, std::runtime_error when the device cannot be set up.
    explicit EventdevNetwork(const NetworkConfig& config);
    ~EventdevNetwork();
    EventdevNetwork(const EventdevNetwork&) = delete;
    EventdevNetwork& operator=(const EventdevNetwork&) = delete;

    const NetworkConfig& config() const { return config_; }
    uint32_t tiles() const { return config_.tiles; }
    uint32_t queues() const { return config_.queues; }
    uint32_t catch_all() const { return config_.queues; }
    const std::string& device_name() const { return device_name_; }

    void bind_tag(TileId tile, Tag tag, uint32_t queue);
    void unbind_tag(TileId tile, Tag tag);
    uint32_t queue_of(TileId tile, Tag tag) const;

    bool try_push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length);
    void push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length, const WaitPolicy& policy = {});
    bool try_pop(TileId tile, uint32_t queue, MessageHeader& header, uint64_t* payload);
    void pop(TileId tile, uint32_t queue, MessageHeader& header, uint64_t* payload, const WaitPolicy& policy = {});

    // As MessageNetwork's: a push target and a pop source resolved once.
    struct Route {
        TileId from = 0;
        TileId to = 0;
        uint32_t queue_index = 0;
        Tag tag = 0;
    };
    Route route(TileId from, TileId to, Tag tag);
    bool try_push(const Route& r, const uint64_t* payload, uint32_t length);
    // As MessageNetwork's (the queue must be claimed by r.from or by credit interfaces); the
    // room is accounted as for any push, so it may be refused when the device is out of room.
    bool try_push_credited(const Route& r, const uint64_t* payload, uint32_t length);
    struct Mailbox {
        TileId tile = 0;
        uint32_t queue = 0;
    };
    Mailbox mailbox(TileId tile, uint32_t queue);
    bool try_pop(const Mailbox& m, MessageHeader& header, uint64_t* payload);

    QueueCounters counters(TileId tile, uint32_t queue) const;
    uint64_t queued_words(TileId tile, uint32_t queue) const;
    Doorbell* data_bell(TileId tile, uint32_t queue);
    void claim(TileId tile, uint32_t queue, TileId sender);  // as MessageNetwork's
    void claim_credited(TileId tile, uint32_t queue);        // as MessageNetwork's
    void release_claim(TileId tile, uint32_t queue);
    detail::QueueLedger& ledger() { return ledger_; }

private:
    bool push_route(const Route& r, const uint64_t* payload, uint32_t length);  // without the claim check
    struct alignas(64) QueueState {
        std::atomic<uint64_t> used{0};    // words pushed and not yet popped
        std::atomic<uint64_t> stalls{0};
        std::atomic<uint32_t> sole_sender{detail::kAnySender};  // set before traffic, read relaxed
        alignas(64) RelaxedCounter messages;  // the popping thread's
        RelaxedCounter words;
        Doorbell data_bell;
        Doorbell space_bell;
    };

    uint32_t index(TileId tile, uint32_t queue) const { return tile * (config_.queues + 1) + queue; }
    QueueState& state(TileId tile, uint32_t queue) { return states_[index(tile, queue)]; }
    // False when the queue is full or the device refused the event (then *device_refused).
    bool push_once(TileId from, TileId to, uint32_t queue, Tag tag, const uint64_t* payload, uint32_t length,
                   bool* device_refused = nullptr);
    bool pop_once(TileId tile, uint32_t queue, MessageHeader& header, uint64_t* payload);
    void configure_device();

    NetworkConfig config_;
    uint8_t dev_ = 0;
    uint32_t service_ = 0;
    std::string device_name_;
    std::unique_ptr<QueueState[]> states_;
    std::vector<TagTable> tags_;
    std::vector<std::unique_ptr<detail::PayloadPool>> pools_;  // per sending tile
    detail::QueueLedger ledger_;
};

}  // namespace tp::noc
