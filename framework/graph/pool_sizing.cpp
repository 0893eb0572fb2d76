#include "framework/graph/pool_sizing.hpp"

#include <rte_malloc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "descriptors/burst.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/app_pools.hpp"
#include "framework/graph/memory_plan.hpp"
#include "framework/graph/worker_params.hpp"

namespace tp {

namespace {

uint32_t round_to_pool_size(uint64_t n) {
    // 2^k - 1 fits DPDK's ring exactly.
    uint64_t p = 4096;
    while (p - 1 < n) p <<= 1;
    return static_cast<uint32_t>(p - 1);
}

// Descriptors a device port user's RX and TX rings hold: a NIC fills every RX descriptor with
// an mbuf of the app's pool when the port starts, and sent mbufs wait in the TX ring until the
// NIC is done with them. A stage that uses a port declares `queues` and `rxd` and/or `txd`;
// a ring it does not size has the port registry's default.
uint64_t ring_mbufs(const NodeConfig& nc, const ParamValues& p) {
    constexpr uint64_t kRingDefault = 1024;
    if (nc.stage->find_param("queues") == nullptr) return 0;
    const auto ring = [&](const char* name) {
        return nc.stage->find_param(name) != nullptr ? p.get_uint(name) : kRingDefault;
    };
    // A sink that sends by port sets up every device it lists.
    const uint64_t ports = nc.stage->device_ports ? nc.stage->device_ports(p) : 1;
    return ports * p.get_uint("queues") * (ring("rxd") + ring("txd"));
}

}  // namespace

uint64_t effective_cache(const AppConfig& app, uint64_t mbufs) {
    // As MbufPool trims it: at most a quarter of the pool.
    return std::min<uint64_t>(app.pool.cache, mbufs / 4);
}

PoolSizing pool_sizing(const AppConfig& app, const AppPlan& plan) {
    PoolSizing s;
    // A thread's mempool cache keeps up to 1.5 x its size once that thread has freed mbufs;
    // the main thread (loading captures, closing stages) has one too.
    const uint64_t threads = plan.threads.cpu_of_thread.size() + 1;
    const uint64_t caches = threads * uint64_t(app.pool.cache) * 3 / 2;
    // What the caches may keep, and a burst for a source; a given pool trims its cache.
    s.minimum = threads * effective_cache(app, app.pool.mbufs != 0 ? app.pool.mbufs : ~0ull) * 3 / 2 + 2 * kBurstMax;
    s.held = 1024 + caches;              // slack for mbufs a stage holds across bursts (reorder, batching)
    // Device rings, once per configured node (a farm's workers share their port).
    std::vector<bool> counted(app.pipeline.size(), false);
    for (const GraphNode& g : plan.graph.nodes)
        for (size_t i : g.stages)
            if (!counted[i]) {
                counted[i] = true;
                s.held += ring_mbufs(app.pipeline[i], worker_params(app, app.pipeline[i], g));
            }
    // What a link to a rank on this host may have lent: any link may, unless the config says
    // they all go by messages (which of them share a host is only known once the ranks run).
    for (const GraphNode& g : plan.graph.nodes)
        if (g.role == NodeRole::RankSend && app.rank_links != "messages") s.held += kRankLinkSlots;
    for (const GraphEdge& e : plan.graph.edges) s.in_flight += e.capacity;
    s.in_flight += plan.graph.nodes.size() * 2 * kBurstMax;  // a burst in hand and one pending per node
    s.defaults = round_to_pool_size(s.held + std::min(s.in_flight, kInFlightCap));
    return s;
}

uint32_t default_pool_mbufs(const AppConfig& app, const AppPlan& plan) { return pool_sizing(app, plan).defaults; }

uint32_t pool_mbufs(const AppConfig& app, const AppPlan& plan) {
    return app.pool.mbufs != 0 ? app.pool.mbufs : default_pool_mbufs(app, plan);
}

void check_pool(const AppConfig& app, const AppPlan& plan) {
    if (app.pool.mbufs == 0) return;
    const PoolSizing s = pool_sizing(app, plan);
    if (app.pool.mbufs >= s.minimum) return;
    // The smallest pool that works with the cache as given (a pool of 4 x cache or more keeps it).
    const uint64_t threads = plan.threads.cpu_of_thread.size() + 1;
    uint64_t need = app.pool.mbufs;
    while (need < threads * effective_cache(app, need) * 3 / 2 + 2 * kBurstMax) ++need;
    throw LocatedError(app.pool.mbufs_where,
                       "pool.mbufs " + std::to_string(app.pool.mbufs) + " is too small for this app: " +
                           std::to_string(threads) + " thread caches (" + std::to_string(threads - 1) +
                           " tile threads and the main one) may keep up to " +
                           std::to_string(effective_cache(app, app.pool.mbufs) * 3 / 2) +
                           " mbufs each while a source waits for " + std::to_string(2 * kBurstMax) +
                           "; set pool.mbufs to at least " + std::to_string(need) +
                           (app.pool.cache != 0 ? " (or pool.cache to 0)" : ""));
}

uint32_t largest_pool_within(const AppConfig& app, uint64_t bytes) {
    MbufPoolSpec spec = app_pool_spec(app, 0);
    uint64_t best = 0;
    for (uint64_t n = 4095; n <= (1ull << 26); n = n * 2 + 1) {
        spec.mbufs = static_cast<uint32_t>(n);
        if (MbufPool::footprint(spec) > bytes) break;
        best = n;
    }
    return static_cast<uint32_t>(best);
}

void check_pool_memory(const AppConfig& app, const AppPlan& plan, const EalOptions& eal, uint64_t available) {
    // EAL's own heap and what it maps besides the pools (eal_memory_mb's slack).
    const uint64_t need = eal_memory_mb(eal) << 20;
    if (need <= available) return;
    const MbufPoolSpec spec = app_pool_spec(app, pool_mbufs(app, plan));
    const uint64_t count = plan_memory(app, plan).pools.size();  // one per place of the sources, sized alike
    const uint64_t pools = count * MbufPool::footprint(spec);
    const uint64_t rest = need - std::min(need, pools);
    const uint32_t fits = available > rest ? largest_pool_within(app, (available - rest) / count) : 0;
    std::string msg = "not enough memory for DPDK: the app needs " + std::to_string(need >> 20) + " MiB (" +
                      (count == 1 ? std::string("its pool") : "each of its " + std::to_string(count) + " pools") + " of " +
                      std::to_string(spec.mbufs) + " mbufs of " + std::to_string(spec.data_room) + " bytes takes " +
                      std::to_string((pools / count) >> 20) + " MiB) and the host has " + std::to_string(available >> 20) +
                      " MiB available; ";
    if (fits >= pool_sizing(app, plan).minimum) {
        msg += "set pool.mbufs to " + std::to_string(fits) + " or fewer (--set pool.mbufs=" + std::to_string(fits) + ")";
        if (app.pool.mbufs != 0 && default_pool_mbufs(app, plan) <= fits)
            msg += ", or leave it out for this app's default of " + std::to_string(default_pool_mbufs(app, plan));
    } else {
        msg += "free memory, or lower what the stages hold (captures preloaded, tables)";
    }
    throw std::runtime_error(msg);
}

}  // namespace tp

namespace tp {

std::string pool_memory_advice(const AppConfig& app, uint32_t mbufs, uint64_t pools) {
    uint64_t free_bytes = 0, total = 0;
    for (unsigned i = 0; i < rte_socket_count(); ++i) {
        rte_malloc_socket_stats st{};
        if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0) {
            free_bytes += st.heap_freesz_bytes;
            total += st.heap_totalsz_bytes;
        }
    }
    const uint64_t pool = MbufPool::footprint(app_pool_spec(app, mbufs));
    const uint32_t fits = largest_pool_within(app, free_bytes / pools);
    std::string s = " (the pool takes " + std::to_string(pool >> 20) + " MiB" +
                    (pools > 1 ? ", as does each of the " + std::to_string(pools - 1) + " after it" : std::string()) + ", DPDK has " +
                    std::to_string(free_bytes >> 20) + " MiB free of " + std::to_string(total >> 20) + " MiB): ";
    if (fits != 0) s += "set pool.mbufs to " + std::to_string(fits) + " or fewer (--set pool.mbufs=" + std::to_string(fits) + "), or ";
    s += "give DPDK more memory (--eal \"-m " + std::to_string((total + pools * pool - std::min(pools * pool, free_bytes)) / (1 << 20) + 256) + "\")";
    return s;
}

}  // namespace tp
