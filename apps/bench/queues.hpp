// The queues the benches measure, reached through their concrete types (the transports are
// `final`, so calls are direct and inlined: the benches measure mechanisms, not the virtual
// call the runtime adds per burst), plus the two peers from Debian's packages behind the
// same try_* interface.
#pragma once

#include <boost/lockfree/spsc_queue.hpp>
#include <readerwriterqueue.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "framework/channel/transport_dpdk.hpp"
#include "framework/channel/transport_lock.hpp"
#include "framework/channel/transport_ring.hpp"
#include "framework/channel/transport_sm.hpp"
#include "framework/channel/transport_sm_shared.hpp"
#include "apps/bench/item_bursts.hpp"
#include "apps/bench/noc_queues.hpp"

namespace tp::bench {

// boost::lockfree::spsc_queue with a run-time capacity; bursts use its array push/pop.
template <typename T>
class BoostSpsc {
public:
    explicit BoostSpsc(uint32_t capacity) : q_(capacity) {}
    bool try_send(const T& v) { return q_.push(v); }
    bool try_recv(T& v) { return q_.pop(v); }
    uint32_t try_send_burst(const T* v, uint32_t n) { return static_cast<uint32_t>(q_.push(v, n)); }
    uint32_t try_recv_burst(T* v, uint32_t n) { return static_cast<uint32_t>(q_.pop(v, n)); }

private:
    boost::lockfree::spsc_queue<T> q_;
};

// moodycamel::ReaderWriterQueue, preallocated; it has no bulk calls, so a burst is a loop of
// try_enqueue/try_dequeue (which never allocate).
template <typename T>
class MoodycamelRwq : public ItemBursts<MoodycamelRwq<T>, T> {
public:
    explicit MoodycamelRwq(uint32_t capacity) : q_(capacity) {}
    bool try_send(const T& v) { return q_.try_enqueue(v); }
    bool try_recv(T& v) { return q_.try_dequeue(v); }

private:
    moodycamel::ReaderWriterQueue<T> q_;
};

inline const std::vector<std::string>& peer_names() {
    static const std::vector<std::string> names{"boost_spsc", "moodycamel"};
    return names;
}

// Calls f(std::type_identity<Q>{}) with the queue type `name` stands for.
template <typename T, typename F>
void visit_queue(const std::string& name, F&& f) {
    if (name == "ring") f(std::type_identity<RingChannel<T>>{});
    else if (name == "sm") f(std::type_identity<SmChannel<T>>{});
    else if (name == "sm_shared") f(std::type_identity<SmSharedChannel<T>>{});
    else if (name == "dpdk") f(std::type_identity<DpdkRingChannel<T>>{});
    else if (name == "lock") f(std::type_identity<LockChannel<T>>{});
    else if (name == "boost_spsc") f(std::type_identity<BoostSpsc<T>>{});
    else if (name == "moodycamel") f(std::type_identity<MoodycamelRwq<T>>{});
    else if (visit_noc_queue<T>(name, f)) {
    }
    else throw std::invalid_argument("unknown queue '" + name + "'");
}

}  // namespace tp::bench
