// The four kernels of the threaded-MPI study and a ping-pong, written once against tp::mp::Comm
// and run by every rank. Each checks its result against a serial reference computed in the
// same program and reports, at every rank, the same totals (reduced over the ranks).
#pragma once

#include <string>
#include <vector>

#include "tilepipe/mp.hpp"

namespace tp::mp::kernels {

struct Result {
    double seconds = 0;     // the timed part, slowest rank
    double flops = 0;       // the study's count for the problem
    double comm_share = 0;  // time in communication calls / time, averaged over the ranks
    bool verified = false;
    double gflops() const { return seconds > 0 ? flops / seconds / 1e9 : 0; }
};

// Cannon's C = A B (single precision, n x n) on a sqrt(p) x sqrt(p) periodic grid, blocks
// shifted with sendrecv_replace; flops 2 n^3. Needs p a square and sqrt(p) dividing n.
Result sgemm(Comm& c, int n);
// N-body accelerations of n particles, blocks of n/p shifted round a ring with
// sendrecv_replace; flops 20 n^2. Needs p dividing n.
Result nbody(Comm& c, int n);
// `iters` Jacobi sweeps of the 5-point stencil on an n x n interior with fixed boundaries, on
// a 2D grid of ranks exchanging halos with their four neighbours; flops 5 n^2 per sweep.
Result stencil(Comm& c, int n, int iters);
// 2D FFT of n x n complex floats: row FFTs, corner turn (all-to-all), row FFTs; flops
// 5 n^2 log2(n^2). Needs n a power of two and p dividing n.
Result fft2d(Comm& c, int n);

// One-way time and bandwidth between ranks 0 and 1 (others idle), per message size.
struct PingRow {
    size_t bytes = 0;
    double one_way_us = 0;
    double bandwidth_gbs = 0;
};
std::vector<PingRow> pingpong(Comm& c, const std::vector<size_t>& sizes, int reps);

// Throws std::invalid_argument (naming `what`) when the problem does not fit p ranks.
void check_shape(const std::string& kernel, int ranks, int n);

}  // namespace tp::mp::kernels
