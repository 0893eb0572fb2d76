// How many mbufs an app's packet pool holds, and how few it may hold.
//
// Three parts: what the app holds for good (device rings a NIC fills at start, mbufs parked in
// the threads' mempool caches, slack for stages that keep packets across bursts), what can be
// in flight (every channel full, a burst in hand and one pending per node) and, only for the
// default, a cap on the in-flight part. Without the cap a farm of W workers would get a pool
// of ~2 x W x queue mbufs (4M mbufs, 16 GiB without hugepages, for 1024 workers): the pool,
// not the queues, bounds what is in flight, as in any DPDK app, and a source that finds it
// empty waits (software sources) or its device counts rx_nombuf (ports) until mbufs return.
// Below the minimum a source may wait for mbufs that sit in other threads' caches forever, so
// plan_app refuses such a `pool.mbufs` with the number needed.
#pragma once

#include <cstdint>
#include <string>

#include "framework/config/app_config.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_graph.hpp"
#include "framework/topology/placement.hpp"

namespace tp {

struct AppPlan;

struct PoolSizing {
    uint64_t held = 0;       // device rings, lcore caches, slack
    uint64_t in_flight = 0;  // every channel full, bursts in hand
    uint64_t minimum = 0;    // the fewest mbufs the app runs with without a possible hang
    uint32_t defaults = 0;   // the default pool: held + min(in_flight, kInFlightCap), 2^k - 1
};

// In-flight mbufs a default pool has room for (256 MiB of 2048-byte mbufs without hugepages;
// at 10 Mpps, 6.5 ms of traffic). Pools the apps in conf/ get stay below it.
inline constexpr uint64_t kInFlightCap = 65536;

// Packets a link between ranks on one host lends at most: its sending rank's pool holds them
// for good (framework/ranks/shared_rank_link.hpp).
inline constexpr uint32_t kRankLinkSlots = 2048;

PoolSizing pool_sizing(const AppConfig& app, const AppPlan& plan);

// Pool size the app gets when `pool.mbufs` is not given.
uint32_t default_pool_mbufs(const AppConfig& app, const AppPlan& plan);

// The pool the app runs with: `pool.mbufs` or the default.
uint32_t pool_mbufs(const AppConfig& app, const AppPlan& plan);

// Throws LocatedError at `pool.mbufs` when it is below the minimum, saying the number needed.
void check_pool(const AppConfig& app, const AppPlan& plan);

// The most mbufs (2^k - 1) a pool of the app's kind holds within `bytes`; 0 when not 4095.
uint32_t largest_pool_within(const AppConfig& app, uint64_t bytes);

// Throws std::runtime_error when the EAL memory `eal` asks for (pools and stages) exceeds
// `available` bytes (host_memory_available()), saying which pool.mbufs fits (every pool
// of the app's is that size).
void check_pool_memory(const AppConfig& app, const AppPlan& plan, const EalOptions& eal, uint64_t available);

// Why a pool of `mbufs` did not fit in EAL's memory and what to change, from EAL's heap stats
// (EAL must be up): appended to the error of a failed pool creation. `pools`: that pool and
// the app's pools still to create after it, all of `mbufs`.
std::string pool_memory_advice(const AppConfig& app, uint32_t mbufs, uint64_t pools = 1);

}  // namespace tp
