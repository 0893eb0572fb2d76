#include "framework/mp/tiles_team.hpp"

#include <exception>
#include <string>

namespace tp::mp::detail {

TilesTeam::TilesTeam(int rank, int tiles, std::vector<int> cpus, bool pin) : rank_(rank), tiles_(tiles) {
    if (tiles_ < 2) return;
    AcceleratorOptions o;
    o.workers = static_cast<unsigned>(tiles_ - 1);
    // Strict turns (round robin, ordered): chunk t always goes to helper t - 1, whose tile
    // thus first-touches and then reuses the same part of the data.
    o.dispatch = TaskDispatch::round_robin;
    o.collection = ResultOrder::ordered;
    o.capacity = 2;
    o.cpus = std::move(cpus);
    o.pin = pin;
    o.name = "rank" + std::to_string(rank) + "-t";
    helpers_ = std::make_unique<Accelerator<Chunk>>(o, [](Chunk& c) { (*c.body)(c.begin, c.end, c.tile); });
}

void TilesTeam::parallel_for(size_t n, const std::function<void(size_t, size_t, int)>& body) {
    auto chunk = [&](int t) { return Chunk{n * size_t(t) / size_t(tiles_), n * size_t(t + 1) / size_t(tiles_), t, &body}; };
    if (!helpers_) return body(0, n, 0);
    std::exception_ptr own;
    std::string helper_error;
    try {
        for (int t = 1; t < tiles_; ++t) helpers_->offload(chunk(t));
    } catch (const std::exception& e) {
        throw Error(rank_, "parallel_for", e.what());
    }
    try {
        const Chunk c = chunk(0);
        body(c.begin, c.end, 0);
    } catch (...) {
        own = std::current_exception();
    }
    // Every helper's chunk back before this returns (or throws): `body` and the data go then.
    try {
        Chunk done;
        for (int t = 1; t < tiles_; ++t) helpers_->get_result(done);
    } catch (const std::exception& e) {
        helper_error = e.what();
        // A helper failed: join them all, so that none is still in `body` when this returns.
        try {
            helpers_->wait();
        } catch (const std::exception&) {
        }
    }
    if (own) {
        try {
            std::rethrow_exception(own);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& e) {
            throw Error(rank_, "parallel_for", std::string("tile 0: ") + e.what());
        }
    }
    if (!helper_error.empty()) throw Error(rank_, "parallel_for", helper_error);
}

}  // namespace tp::mp::detail
