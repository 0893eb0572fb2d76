// Wall time of the timed part and of the communication calls inside it, and the reduction
// of both over the ranks into a kernels::Result.
#pragma once

#include <chrono>

#include "apps/mp/kernels.hpp"

namespace tp::mp::kernels {

class Timing {
public:
    void start() { t0_ = now(); }
    void stop() { total_ = now() - t0_; }
    template <typename F>
    void comm(F&& f) {
        const double t = now();
        f();
        comm_ += now() - t;
    }
    // Slowest rank's time, mean communication share, and whether every rank verified.
    Result reduce(Comm& c, double flops, bool verified) const {
        double in[2] = {total_, comm_ / (total_ > 0 ? total_ : 1)}, mx[2], sum[2];
        c.allreduce(in, mx, 2, Op::Max);
        c.allreduce(in, sum, 2, Op::Sum);
        int ok = verified ? 1 : 0, all = 0;
        c.allreduce(&ok, &all, 1, Op::Min);
        return Result{mx[0], flops, sum[1] / c.size(), all == 1};
    }

private:
    static double now() {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }
    double t0_ = 0, total_ = 0, comm_ = 0;
};

}  // namespace tp::mp::kernels
