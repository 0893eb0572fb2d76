// The four kernels of the threaded-MPI study and a ping-pong, written once against tp::mp::Comm
// and run by every rank. Each checks its result against a serial reference computed in the
// same program and reports, at every rank, the same totals (reduced over the ranks).
#pragma once

#include <string>
#include <utility>
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

// How a kernel is written: as the Epiphany study wrote it (Study), or tilepipe's earlier
// variant (Tilepipe), kept where it is the better measure (see each kernel).
enum class Style { Study, Tilepipe };

// Cannon's C = A B (single precision, n x n) on a sqrt(p) x sqrt(p) periodic grid, blocks
// shifted with sendrecv_replace; flops 2 n^3. Needs p a square and sqrt(p) dividing n.
// Study: the initial skew is set-up, outside the timed part; Tilepipe: timed with the rest.
Result sgemm(Comm& c, int n, Style style = Style::Study);
// N-body of n particles, blocks of n/p shifted round a ring with sendrecv_replace. Study:
// `steps` time steps, each the accelerations then every rank's velocity and position update
// (flops 20 n^2 + 12 n per step); Tilepipe: the accelerations once (20 n^2, `steps` unused).
// Needs p dividing n.
Result nbody(Comm& c, int n, Style style = Style::Study, int steps = 10);
// `iters` Jacobi sweeps of a 5-point stencil on an n x n interior with fixed boundaries, on
// a 2D grid of ranks. Study: a weight per neighbour (5 multiplies, 4 adds: 9 flops per
// point) and halos shifted with sendrecv_replace through packed edge buffers; Tilepipe: the
// mean of the five (5 flops per point) and halos exchanged with sendrecv.
Result stencil(Comm& c, int n, int iters, Style style = Style::Study);
// 2D FFT of n x n complex floats: row FFTs, corner turn (all-to-all), row FFTs, and (Study)
// a final corner turn that leaves every rank its own rows of the transform, as it began;
// Tilepipe leaves the transform's columns as rows. Flops 5 n^2 log2(n^2). Needs n a power
// of two and p dividing n.
Result fft2d(Comm& c, int n, Style style = Style::Study);

// One-way time and bandwidth between ranks 0 and 1 (others idle), per message size.
struct PingRow {
    size_t bytes = 0;
    double one_way_us = 0;
    double bandwidth_gbs = 0;
};
std::vector<PingRow> pingpong(Comm& c, const std::vector<size_t>& sizes, int reps);

// mp-shift: every rank shifts `bytes` round a periodic grid at once with sendrecv_replace,
// each size in turn: "1d" a ring of p, "2d" a torus of grid_of(p) shifting left along its rows
// then up along its columns (a Cannon step; its time per shift is the step's half). `us`:
// the slowest rank's mean time per shift.
struct ShiftRow {
    const char* grid = "1d";
    size_t bytes = 0;
    double us = 0;
};
std::vector<ShiftRow> shift(Comm& c, const std::vector<size_t>& sizes, int reps);
// Rows by columns of ranks, as square as p allows (stencil and mp-shift's 2D grid).
std::pair<int, int> grid_of(int p);

// The study's model of one shift, t = alpha0 + alpha1 k + beta m, with k the buffer-sized
// pieces the message moves in and m its bytes, fitted by least squares.
struct ShiftPoint {
    double pieces = 0, bytes = 0, us = 0;
};
struct ShiftFit {
    double alpha0_us = 0;     // per shift
    double alpha1_us = 0;     // per piece
    double beta_ns = 0;       // per byte
    bool has_alpha1 = false;  // false: k did not vary apart from m, so t = alpha0 + beta m
};
ShiftFit fit_shift(const std::vector<ShiftPoint>& pts);

// Throws std::invalid_argument (naming `what`) when the problem does not fit p ranks.
void check_shape(const std::string& kernel, int ranks, int n);

}  // namespace tp::mp::kernels
