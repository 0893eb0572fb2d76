#include "framework/mp/tiles_world.hpp"

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/mp/tiles_comm.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/topology/placement.hpp"

namespace tp::mp {

namespace {

void check(const TilesOptions& o) {
    if (o.ranks < 1) throw std::invalid_argument("tiles: --ranks must be at least 1, not " + std::to_string(o.ranks));
    if (o.ranks > 4096) throw std::invalid_argument("tiles: at most 4096 ranks, not " + std::to_string(o.ranks));
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
    Topology topo = Topology::preset(options.topology.empty() ? "host" : options.topology, n);
    PlacementRequest req;
    req.nodes = n;
    req.policy = placement_policy(options.placement);
    for (size_t r = 0; r + 1 < n; ++r) req.edges.push_back(TrafficEdge{r, r + 1, 1.0});
    std::vector<int> tiles;
    try {
        tiles = place_nodes(topo, req);
    } catch (const PlacementError& e) {
        throw std::invalid_argument("tiles: cannot place " + std::to_string(n) + " ranks on " + topo.name() + ": " +
                                    e.what());
    }
    const ThreadMap threads = map_tiles_to_cpus(topo, tiles, allowed_cpus(), false);
    detail::TilesShared shared(options, wait, std::move(topo), tiles);

    FirstError error;
    std::vector<std::thread> pool;
    pool.reserve(n);
    for (size_t r = 0; r < n; ++r) {
        pool.emplace_back([&, r] {
            if (options.pin) pin_current_thread(threads.cpu_of_thread[threads.thread_of_node[r]]);
            const int rank = static_cast<int>(r);
            try {
                detail::TilesComm comm(shared, rank);
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
