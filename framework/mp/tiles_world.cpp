#include "framework/mp/tiles_world.hpp"

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/mp/tiles_comm.hpp"
#include "framework/mp/tiles_team.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/topology/placement.hpp"

namespace tp::mp {

namespace {

void check(const TilesOptions& o) {
    if (o.ranks < 1) throw std::invalid_argument("tiles: --ranks must be at least 1, not " + std::to_string(o.ranks));
    if (o.ranks > 4096) throw std::invalid_argument("tiles: at most 4096 ranks, not " + std::to_string(o.ranks));
    if (o.tiles_per_rank < 1 || o.tiles_per_rank > 64)
        throw std::invalid_argument("tiles: --tiles-per-rank must be 1..64, not " + std::to_string(o.tiles_per_rank));
    if (o.credits < 2) throw std::invalid_argument("tiles: credits must be at least 2, not " + std::to_string(o.credits));
    if (o.replace_buffer < kTilesMinReplaceBuffer)
        throw std::invalid_argument("tiles: the sendrecv_replace buffer must be at least " +
                                    std::to_string(kTilesMinReplaceBuffer) + " bytes, not " +
                                    std::to_string(o.replace_buffer));
}

// First error wins: it is the cause; ranks that then failed waiting on the rank that raised
// it come later.
class FirstError {
public:
    void offer(std::exception_ptr e) {
        std::lock_guard lock(mu_);
        if (!first_) first_ = e;
    }
    void rethrow() {
        if (first_) std::rethrow_exception(first_);
    }

private:
    std::mutex mu_;
    std::exception_ptr first_;
};

}  // namespace

// A blocked rank spins, then sleeps on its doorbell: never the runtime's yield phase. A rank
// that yields has given its CPU away without announcing itself, so its peer's answer cannot
// wake it: the answer's push rings a bell whose parked flag is clear (Doorbell::ring_light
// reads 0 and wakes nobody), and the rank runs again only when the scheduler comes back to
// it, which behind another runnable thread on its CPU (another program's, even one of the
// lowest priority) is the next tick, 4 ms at HZ=250, for every message. A sleeping rank has
// announced itself first (prepare_park: its parked flag, then the barrier, then the re-check
// of its queue), so the peer's push, published before the peer reads the flag, is either
// seen by the re-check or rings the bell; and a thread woken from the futex preempts one of
// lower priority at once instead of waiting for the tick.
WaitPolicy tiles_wait_policy() {
    WaitPolicy w;
    w.yield_rounds = 0;
    return w;
}

void run_tiles(const TilesOptions& options, const std::function<void(Comm&)>& fn) {
    run_tiles(options, tiles_wait_policy(), fn);
}

void run_tiles(const TilesOptions& options, const WaitPolicy& wait, const std::function<void(Comm&)>& fn) {
    check(options);
    const size_t n = static_cast<size_t>(options.ranks);
    // Rank r owns nodes r*T .. r*T + T - 1 of the placement: a run of consecutive tiles.
    const size_t per = static_cast<size_t>(options.tiles_per_rank), nodes = n * per;
    Topology topo = Topology::preset(options.topology.empty() ? "host" : options.topology, nodes);
    PlacementRequest req;
    req.nodes = nodes;
    req.policy = placement_policy(options.placement);
    for (size_t r = 0; r + 1 < nodes; ++r) req.edges.push_back(TrafficEdge{r, r + 1, 1.0});
    std::vector<int> tiles;
    try {
        tiles = place_nodes(topo, req);
    } catch (const PlacementError& e) {
        throw std::invalid_argument("tiles: cannot place " + std::to_string(n) + " ranks" +
                                    (per > 1 ? " of " + std::to_string(per) + " tiles" : std::string()) + " on " +
                                    topo.name() + ": " + e.what());
    }
    const ThreadMap threads = map_tiles_to_cpus(topo, tiles, allowed_cpus(), false);
    auto cpu_of = [&](size_t node) { return threads.cpu_of_thread[threads.thread_of_node[node]]; };
    std::vector<int> first_tiles(n);
    for (size_t r = 0; r < n; ++r) first_tiles[r] = tiles[r * per];
    detail::TilesShared shared(options, wait, std::move(topo), first_tiles);

    FirstError error;
    std::vector<std::thread> pool;
    pool.reserve(n);
    for (size_t r = 0; r < n; ++r) {
        pool.emplace_back([&, r] {
            if (options.pin) pin_current_thread(cpu_of(r * per));
            const int rank = static_cast<int>(r);
            try {
                std::vector<int> helper_cpus;
                for (size_t t = 1; t < per; ++t) helper_cpus.push_back(cpu_of(r * per + t));
                detail::TilesTeam team(rank, options.tiles_per_rank, std::move(helper_cpus), options.pin);
                detail::TilesComm comm(shared, rank, team);
                fn(comm);
                if (const size_t live = comm.live_requests(); live != 0)
                    throw Error(rank, "finalize", std::to_string(live) + " request(s) started and never waited");
            } catch (const Error&) {
                error.offer(std::current_exception());
            } catch (const std::exception& e) {
                error.offer(std::make_exception_ptr(Error(rank, "rank function", e.what())));
            } catch (...) {  // anything else would end the process from this thread
                error.offer(std::make_exception_ptr(Error(rank, "rank function", "an exception that is not a std::exception")));
            }
            // release: what this rank pushed is visible to a peer that sees it finished.
            shared.flags[r].finished.store(true, std::memory_order_release);
            for (size_t p = 0; p < n; ++p) shared.bells[p].ring();
        });
    }
    for (std::thread& t : pool) t.join();
    error.rethrow();
}

}  // namespace tp::mp
