// The process's software event devices (DPDK `event_sw` vdevs) and the threads that drive
// them.
//
// acquire_event_device hands out a stopped device for a network to configure, creating one
// (vdev `event_sw_tilepipe<k>`) when none is free; release takes back a stopped one. Devices
// are reused rather than removed: event_sw registers an EAL service per device and never
// unregisters it (EAL has 64), and leaks its IQ memory on close, so a process that builds
// and drops many networks (tests, benches) would run out. DPDK allows 16 event devices per
// process, so at most 16 EventdevNetworks live at once.
//
// event_sw schedules in an EAL service; with no service core here, the network runs one
// scheduler iteration from the thread that polls (rte_service_run_iter_on_app_lcore), which
// must have an lcore id: ensure_lcore registers the calling thread with EAL once (and
// unregisters it when the thread ends).
#pragma once

#include <cstdint>
#include <string>

namespace tp::noc::detail {

// Device credits an event_sw port takes from (and gives back to) the device's pool at a time;
// a port keeps up to 2 x kCreditQuanta - 1 between those (see event_device_pool.cpp).
inline constexpr uint32_t kCreditQuanta = 8;

struct EventDevice {
    uint8_t id = 0;
    std::string name;
};

// Throws std::invalid_argument when EAL is not running, std::runtime_error when DPDK has no
// device left or cannot create one.
EventDevice acquire_event_device();
void release_event_device(uint8_t id);  // the device must be stopped

// Throws std::runtime_error when EAL has no lcore id left for this thread.
void ensure_lcore();

}  // namespace tp::noc::detail
