#include "framework/noc/detail/event_device_pool.hpp"

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_eventdev.h>
#include <rte_lcore.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include "framework/eal/eal_session.hpp"

namespace tp::noc::detail {

namespace {

struct Slot {
    EventDevice device;
    bool in_use = false;
};

std::mutex g_pool_mutex;
std::vector<Slot> g_slots;  // guarded by g_pool_mutex

// credit_quanta: how many device credits a port takes from (and returns to) the shared pool
// at a time; each port may hold up to twice that, so 64 ports at the default 32 could hold
// all 4096 and starve the rest. 8 keeps the hoard at 1024.
static_assert(kCreditQuanta == 8, "kDeviceArgs says 8");
constexpr const char* kDeviceArgs = "credit_quanta=8";

}  // namespace

EventDevice acquire_event_device() {
    if (!eal_started())
        throw std::invalid_argument("eventdev network: needs DPDK EAL running (eal_start) to create its event device");
    std::lock_guard<std::mutex> lk(g_pool_mutex);
    for (Slot& s : g_slots)
        if (!s.in_use) {
            s.in_use = true;
            return s.device;
        }
    const std::string name = "event_sw_tilepipe" + std::to_string(g_slots.size());
    const int rc = rte_eal_hotplug_add("vdev", name.c_str(), kDeviceArgs);
    const int id = rc == 0 ? rte_event_dev_get_dev_id(name.c_str()) : -1;
    if (id < 0)
        throw std::runtime_error("eventdev network: cannot create event device " + name + " (" +
                                 rte_strerror(rc < 0 ? -rc : rte_errno) + "); DPDK allows " +
                                 std::to_string(RTE_EVENT_MAX_DEVS) + " event devices per process and " +
                                 std::to_string(rte_event_dev_count()) + " exist");
    g_slots.push_back(Slot{EventDevice{static_cast<uint8_t>(id), name}, true});
    return g_slots.back().device;
}

void release_event_device(uint8_t id) {
    std::lock_guard<std::mutex> lk(g_pool_mutex);
    for (Slot& s : g_slots)
        if (s.device.id == id) s.in_use = false;
}

void ensure_lcore() {
    struct Registration {
        bool registered = false;
        ~Registration() {
            if (registered) rte_thread_unregister();
        }
    };
    thread_local Registration registration;
    if (rte_lcore_id() != LCORE_ID_ANY) return;  // an EAL thread, or registered already
    if (rte_thread_register() != 0 || rte_lcore_id() == LCORE_ID_ANY)
        throw std::runtime_error(std::string("eventdev network: cannot register this thread with DPDK EAL (") +
                                 rte_strerror(rte_errno) + "); EAL has " + std::to_string(RTE_MAX_LCORE) +
                                 " lcore ids for all threads that drive event devices");
    registration.registered = true;
}

}  // namespace tp::noc::detail
