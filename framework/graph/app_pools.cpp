#include "framework/graph/app_pools.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "framework/graph/pool_sizing.hpp"

namespace tp {

namespace {
std::atomic<int> g_pool_serial{0};
}  // namespace

MbufPoolSpec app_pool_spec(const AppConfig& app, uint32_t mbufs) {
    MbufPoolSpec spec;
    spec.mbufs = mbufs;
    spec.cache = app.pool.cache;
    spec.data_room = static_cast<uint16_t>(app.pool.data_room);
    return spec;
}

std::vector<MbufPoolSpec> app_pool_specs(const AppConfig& app, const AppPlan& plan) {
    return std::vector<MbufPoolSpec>(plan_memory(app, plan).pools.size(), app_pool_spec(app, pool_mbufs(app, plan)));
}

uint64_t app_pools_footprint(const AppConfig& app, const AppPlan& plan) {
    uint64_t bytes = 0;
    for (const MbufPoolSpec& spec : app_pool_specs(app, plan)) bytes += MbufPool::footprint(spec);
    return bytes;
}

std::vector<std::unique_ptr<MbufPool>> make_app_pools(const AppConfig& app, const AppPlan& plan, const MemoryPlan& memory,
                                                      const std::function<void(size_t, MbufPoolSpec&)>& place) {
    std::vector<std::unique_ptr<MbufPool>> pools;
    const std::vector<MbufPoolSpec> specs = app_pool_specs(app, plan);
    for (size_t i = 0; i < memory.pools.size(); ++i) {
        MbufPoolSpec spec = specs.at(i);
        spec.name = "tp_pkts_" + std::to_string(g_pool_serial.fetch_add(1));
        // With hugepages nothing binds a pool afterwards: DPDK's socket is its only placement.
        spec.socket = eal_socket_of(memory.pools[i]);
        if (place) place(i, spec);
        try {
            pools.push_back(std::make_unique<MbufPool>(spec));
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(e.what() + pool_memory_advice(app, spec.mbufs, memory.pools.size() - i));
        }
        const MbufPool& p = *pools.back();
        spdlog::debug("pool {}: {} mbufs of {} bytes, cache {}, handler {}, {}", p.name(), p.capacity(), p.data_room(), spec.cache,
                      p.handler(), describe(memory.pools[i]));
    }
    return pools;
}

}  // namespace tp
