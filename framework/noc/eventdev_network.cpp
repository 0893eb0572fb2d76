#include "framework/noc/eventdev_network.hpp"

#include "descriptors/tsan_sync.hpp"

#include <rte_errno.h>
#include <rte_eventdev.h>
#include <rte_service.h>

#include <algorithm>
#include <stdexcept>

#include "framework/noc/detail/event_device_pool.hpp"

namespace tp::noc {

namespace {

using detail::PayloadPool;

NetworkConfig checked(const NetworkConfig& config) {
    NetworkConfig c = validated(config, EventdevNetwork::kBackend);
    if (c.tiles > 256)
        throw std::invalid_argument(std::string(EventdevNetwork::kBackend) +
                                    " network: at most 256 tiles (the source rides in an 8-bit event field), got " +
                                    std::to_string(c.tiles));
    return c;
}

// The header in the event's spare fields: tag and the length's low 4 bits in flow_id (20
// bits), the length's high bits in event_type (4), the source tile in sub_event_type (8).
void encode(rte_event& ev, TileId source, Tag tag, uint32_t length) {
    ev.flow_id = tag | ((length & 0xfu) << 16);
    ev.event_type = (length >> 4) & 0xfu;
    ev.sub_event_type = source & 0xffu;
}

MessageHeader decode(const rte_event& ev) {
    return MessageHeader{ev.sub_event_type, static_cast<Tag>(ev.flow_id & 0xffffu),
                         ((ev.flow_id >> 16) & 0xfu) | (uint32_t{ev.event_type} << 4)};
}

void check(int rc, const std::string& what) {
    if (rc < 0)
        throw std::runtime_error(std::string(EventdevNetwork::kBackend) + " network: " + what + " failed (" +
                                 rte_strerror(-rc) + ")");
}

}  // namespace

EventdevNetwork::EventdevNetwork(const NetworkConfig& config)
    : config_(checked(config)), ledger_(config_, kBackend) {
    const detail::EventDevice device = detail::acquire_event_device();
    dev_ = device.id;
    device_name_ = device.name;
    try {
        configure_device();
    } catch (...) {
        rte_event_dev_stop(dev_);
        rte_event_dev_close(dev_);
        detail::release_event_device(dev_);
        throw;
    }
    const uint32_t n = config_.tiles * (config_.queues + 1);
    states_ = std::make_unique<QueueState[]>(n);
    tags_.reserve(config_.tiles);
    for (uint32_t t = 0; t < config_.tiles; ++t) {
        tags_.emplace_back(catch_all());
        pools_.push_back(std::make_unique<PayloadPool>());
    }
}

EventdevNetwork::~EventdevNetwork() {
    rte_event_dev_stop(dev_);  // drains whatever is still in flight
    // Closing releases the ports: event_sw's port set-up on a reconfigured device would
    // otherwise subtract the old ports' credits from a device-wide count configure just
    // zeroed, and refuse every enqueue after.
    rte_event_dev_close(dev_);
    detail::release_event_device(dev_);
}

void EventdevNetwork::configure_device() {
    rte_event_dev_info info{};
    check(rte_event_dev_info_get(dev_, &info), "rte_event_dev_info_get");
    const uint32_t ports = config_.tiles * (config_.queues + 1);
    if (ports > info.max_event_ports || ports > info.max_event_queues)
        throw std::invalid_argument(std::string(kBackend) + " network: " + std::to_string(config_.tiles) + " tiles x (" +
                                    std::to_string(config_.queues) + " queues + catch-all) = " + std::to_string(ports) +
                                    " event ports, but " + info.driver_name + " offers " +
                                    std::to_string(std::min<uint32_t>(info.max_event_ports, info.max_event_queues)) +
                                    "; use fewer tiles or fewer queues per tile");
    rte_event_dev_config dc{};
    dc.nb_event_queues = static_cast<uint8_t>(ports);
    dc.nb_event_ports = static_cast<uint8_t>(ports);
    dc.nb_events_limit = info.max_num_events;
    if (config_.device_events != 0) {
        // Each port may keep up to 2 quanta - 1 credits it cannot spend; one quantum more
        // stays for a push, so a refusal lasts only until some port's pop returns credits.
        const uint32_t least = ports * 2 * detail::kCreditQuanta + detail::kCreditQuanta;
        if (config_.device_events < least || config_.device_events > static_cast<uint32_t>(info.max_num_events))
            throw std::invalid_argument(std::string(kBackend) + " network: device_events must be between " +
                                        std::to_string(least) + " (for " + std::to_string(ports) + " event ports) and " +
                                        std::to_string(info.max_num_events) + ", got " +
                                        std::to_string(config_.device_events));
        dc.nb_events_limit = static_cast<int32_t>(config_.device_events);
    }
    dc.nb_event_queue_flows = std::min<uint32_t>(1024, info.max_event_queue_flows);
    dc.nb_event_port_dequeue_depth = info.max_event_port_dequeue_depth;
    dc.nb_event_port_enqueue_depth = std::min<uint32_t>(128, info.max_event_port_enqueue_depth);
    dc.dequeue_timeout_ns = 0;
    check(rte_event_dev_configure(dev_, &dc), "rte_event_dev_configure");
    for (uint32_t i = 0; i < ports; ++i) {
        rte_event_queue_conf qc{};
        qc.event_queue_cfg = RTE_EVENT_QUEUE_CFG_SINGLE_LINK;  // one port: the device demuxes
        qc.schedule_type = RTE_SCHED_TYPE_ATOMIC;
        qc.nb_atomic_flows = dc.nb_event_queue_flows;
        qc.nb_atomic_order_sequences = 1;
        qc.priority = RTE_EVENT_DEV_PRIORITY_NORMAL;
        check(rte_event_queue_setup(dev_, static_cast<uint8_t>(i), &qc), "rte_event_queue_setup");
        rte_event_port_conf pc{};
        pc.new_event_threshold = static_cast<int32_t>(dc.nb_events_limit);
        pc.dequeue_depth = dc.nb_event_port_dequeue_depth;
        pc.enqueue_depth = dc.nb_event_port_enqueue_depth;
        check(rte_event_port_setup(dev_, static_cast<uint8_t>(i), &pc), "rte_event_port_setup");
        const auto q = static_cast<uint8_t>(i);
        if (rte_event_port_link(dev_, q, &q, nullptr, 1) != 1)
            check(-(rte_errno != 0 ? rte_errno : EINVAL), "rte_event_port_link");
    }
    check(rte_event_dev_service_id_get(dev_, &service_), "rte_event_dev_service_id_get");
    // No service core maps the scheduler: the polling threads run it (see the header).
    check(rte_service_runstate_set(service_, 1), "rte_service_runstate_set");
    check(rte_service_set_runstate_mapped_check(service_, 0), "rte_service_set_runstate_mapped_check");
    check(rte_event_dev_start(dev_), "rte_event_dev_start");
}

void EventdevNetwork::bind_tag(TileId tile, Tag tag, uint32_t queue) {
    detail::check_queue(config_, kBackend, tile, queue, false);
    tags_[tile].bind(tag, queue);
}

void EventdevNetwork::unbind_tag(TileId tile, Tag tag) {
    detail::check_queue(config_, kBackend, tile, 0, false);
    tags_[tile].unbind(tag);
}

uint32_t EventdevNetwork::queue_of(TileId tile, Tag tag) const {
    detail::check_queue(config_, kBackend, tile, 0, false);
    return tags_[tile].queue_of(tag);
}

bool EventdevNetwork::push_once(TileId from, TileId to, uint32_t queue, Tag tag, const uint64_t* payload,
                                uint32_t length, bool* device_refused) {
    QueueState& s = state(to, queue);
    const uint64_t need = uint64_t{length} + 1;
    // relaxed: `used` only bounds the queue's contents; the message travels in the event.
    uint64_t used = s.used.load(std::memory_order_relaxed);
    const uint32_t holds = config_.words_of(to, queue);
    do {
        if (used + need > holds) return false;
    } while (!s.used.compare_exchange_weak(used, used + need, std::memory_order_relaxed, std::memory_order_relaxed));

    rte_event ev{};
    encode(ev, from, tag, length);
    ev.queue_id = static_cast<uint8_t>(index(to, queue));
    ev.op = RTE_EVENT_OP_NEW;
    ev.sched_type = RTE_SCHED_TYPE_ATOMIC;
    ev.priority = RTE_EVENT_DEV_PRIORITY_NORMAL;
    PayloadPool::Buffer* buffer = nullptr;
    if (length == 1) {
        ev.u64 = payload[0];
    } else if (length > 1) {
        buffer = pools_[from]->take();
        PayloadPool::publish(buffer, payload, length);
        ev.event_ptr = buffer;
    }
    tsan_release(&state(to, queue));  // the event device's ordering is invisible to TSan
    if (rte_event_enqueue_burst(dev_, static_cast<uint8_t>(index(from, catch_all())), &ev, 1) == 1) return true;
    if (device_refused != nullptr) *device_refused = true;
    s.used.fetch_sub(need, std::memory_order_relaxed);  // relaxed: as above
    if (buffer != nullptr) {
        buffer->ready.store(0, std::memory_order_relaxed);  // relaxed: the buffer never left this thread
        pools_[from]->put_unused(buffer);
    }
    return false;
}

bool EventdevNetwork::try_push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length) {
    return try_push(route(from, to, tag), payload, length);
}

EventdevNetwork::Route EventdevNetwork::route(TileId from, TileId to, Tag tag) {
    detail::check_push(config_, kBackend, from, to, 0);
    return Route{from, to, tags_[to].queue_of(tag), tag};
}

bool EventdevNetwork::try_push(const Route& r, const uint64_t* payload, uint32_t length) {
    // relaxed: see QueueState
    detail::check_sender(kBackend, r.from, r.to, r.queue_index,
                         state(r.to, r.queue_index).sole_sender.load(std::memory_order_relaxed));
    return push_route(r, payload, length);
}

bool EventdevNetwork::push_route(const Route& r, const uint64_t* payload, uint32_t length) {
    if (length > config_.max_payload) detail::throw_bad_push(config_, kBackend, r.from, r.to, length);
    QueueState& s = state(r.to, r.queue_index);
    if (!push_once(r.from, r.to, r.queue_index, r.tag, payload, length)) {
        s.stalls.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
        return false;
    }
    if (config_.doorbells) s.data_bell.ring();
    return true;
}

bool EventdevNetwork::try_push_credited(const Route& r, const uint64_t* payload, uint32_t length) {
    const uint32_t sole = state(r.to, r.queue_index).sole_sender.load(std::memory_order_relaxed);  // relaxed: see QueueState
    if (sole != r.from && sole != detail::kCreditedSenders) detail::throw_claimed(kBackend, r.from, r.to, r.queue_index, sole);
    return push_route(r, payload, length);
}

void EventdevNetwork::push(TileId from, TileId to, Tag tag, const uint64_t* payload, uint32_t length,
                           const WaitPolicy& policy) {
    detail::check_push(config_, kBackend, from, to, length);
    const uint32_t q = tags_[to].queue_of(tag);
    QueueState& s = state(to, q);
    detail::check_sender(kBackend, from, to, q, s.sole_sender.load(std::memory_order_relaxed));  // relaxed: see QueueState
    bool device_refused = false;
    auto attempt = [&] {
        device_refused = false;
        return push_once(from, to, q, tag, payload, length, &device_refused);
    };
    if (!attempt()) {
        s.stalls.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic; once per waiting push
        policy.wait(attempt, [&](auto& again) {
            // The queue had room but the device had none: a pop of this queue (what rings the
            // space bell) may never come, and the device rings nobody. Nap and try again.
            if (device_refused) {
                nap(policy.nap_without_bell);
                return again();
            }
            return park_on(config_.doorbells ? &s.space_bell : nullptr, policy, again);
        });
    }
    if (config_.doorbells) s.data_bell.ring();
}

bool EventdevNetwork::pop_once(TileId tile, uint32_t queue, MessageHeader& header, uint64_t* payload) {
    const auto port = static_cast<uint8_t>(index(tile, queue));
    rte_event ev;
    if (rte_event_dequeue_burst(dev_, port, &ev, 1, 0) == 0) {
        // Nothing scheduled to this port yet: run the scheduler once. EBUSY: another thread
        // is running it, in an iteration that may have begun before the event this pop was
        // rung for came in; returning empty-handed then would park the caller with nobody left
        // to ring it. So wait for that iteration to end and run one of our own.
        detail::ensure_lcore();
        while (rte_service_run_iter_on_app_lcore(service_, 1) == -EBUSY) yield_cpu();
        if (rte_event_dequeue_burst(dev_, port, &ev, 1, 0) == 0) return false;
    }
    tsan_acquire(&state(tile, queue));
    header = decode(ev);
    if (header.length == 1) payload[0] = ev.u64;
    else if (header.length > 1) PayloadPool::read(static_cast<PayloadPool::Buffer*>(ev.event_ptr), payload, header.length);
    QueueState& s = state(tile, queue);
    s.used.fetch_sub(uint64_t{header.length} + 1, std::memory_order_relaxed);  // relaxed: see push_once
    s.messages.inc();
    s.words.add(header.length);
    return true;
}

bool EventdevNetwork::try_pop(TileId tile, uint32_t queue, MessageHeader& header, uint64_t* payload) {
    return try_pop(mailbox(tile, queue), header, payload);
}

EventdevNetwork::Mailbox EventdevNetwork::mailbox(TileId tile, uint32_t queue) {
    detail::check_queue(config_, kBackend, tile, queue, true);
    return Mailbox{tile, queue};
}

bool EventdevNetwork::try_pop(const Mailbox& m, MessageHeader& header, uint64_t* payload) {
    if (!pop_once(m.tile, m.queue, header, payload)) return false;
    if (config_.doorbells) state(m.tile, m.queue).space_bell.ring();
    return true;
}

void EventdevNetwork::pop(TileId tile, uint32_t queue, MessageHeader& header, uint64_t* payload,
                          const WaitPolicy& policy) {
    detail::check_queue(config_, kBackend, tile, queue, true);
    QueueState& s = state(tile, queue);
    policy.wait([&] { return pop_once(tile, queue, header, payload); },
                [&](auto& again) { return park_on(config_.doorbells ? &s.data_bell : nullptr, policy, again); });
    if (config_.doorbells) s.space_bell.ring();
}

void EventdevNetwork::claim(TileId tile, uint32_t queue, TileId sender) {
    detail::check_push(config_, kBackend, sender, tile, 0);
    // relaxed: claims are made before traffic starts (thread creation orders them).
    ledger_.claim(tile, queue, sender);
    state(tile, queue).sole_sender.store(sender, std::memory_order_relaxed);
}

void EventdevNetwork::claim_credited(TileId tile, uint32_t queue) {
    ledger_.claim_credited(tile, queue);
    state(tile, queue).sole_sender.store(detail::kCreditedSenders, std::memory_order_relaxed);  // relaxed: as in claim
}

void EventdevNetwork::release_claim(TileId tile, uint32_t queue) {
    state(tile, queue).sole_sender.store(ledger_.release_claim(tile, queue), std::memory_order_relaxed);  // relaxed: as in claim
}

QueueCounters EventdevNetwork::counters(TileId tile, uint32_t queue) const {
    detail::check_queue(config_, kBackend, tile, queue, true);
    const QueueState& s = states_[index(tile, queue)];
    return QueueCounters{s.messages.get(), s.words.get(), s.stalls.load(std::memory_order_relaxed)};  // relaxed: statistics
}

uint64_t EventdevNetwork::queued_words(TileId tile, uint32_t queue) const {
    detail::check_queue(config_, kBackend, tile, queue, true);
    return states_[index(tile, queue)].used.load(std::memory_order_relaxed);  // relaxed: a statistic
}

Doorbell* EventdevNetwork::data_bell(TileId tile, uint32_t queue) {
    detail::check_queue(config_, kBackend, tile, queue, true);
    return config_.doorbells ? &state(tile, queue).data_bell : nullptr;
}

}  // namespace tp::noc
