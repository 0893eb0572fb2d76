// The app's packet pools: one MbufPool per place MemoryPlan::pools lists, each sized like the
// single pool an app with alike sources gets (pool_mbufs: each can hold every packet the app
// has in flight, whichever sources fill it), named tp_pkts_N by a process-wide count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/config/app_config.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/memory_plan.hpp"

namespace tp {

// A pool of `mbufs` with the app's `pool:` settings (no name).
MbufPoolSpec app_pool_spec(const AppConfig& app, uint32_t mbufs);

// One spec per place MemoryPlan::pools lists, unnamed and unplaced: the pools make_app_pools
// creates (a rank that lends its pools to another process lays them out from these first).
std::vector<MbufPoolSpec> app_pool_specs(const AppConfig& app, const AppPlan& plan);

// EAL memory the app's pools take together.
uint64_t app_pools_footprint(const AppConfig& app, const AppPlan& plan);

// Creates one pool per place of `memory` (EAL must be up), in its order; binding is the
// caller's. `place` may set where a pool's mbufs go (its index, its spec). Throws
// std::runtime_error with pool_memory_advice when one does not fit.
std::vector<std::unique_ptr<MbufPool>> make_app_pools(const AppConfig& app, const AppPlan& plan, const MemoryPlan& memory,
                                                      const std::function<void(size_t, MbufPoolSpec&)>& place = {});

}  // namespace tp
