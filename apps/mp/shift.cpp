// mp-shift: every rank shifts a message round a periodic grid at once with sendrecv_replace
// (a 1D ring, and a 2D torus shifting along its rows then its columns, Cannon's step), and
// the fit of the study's shift model t = alpha0 + alpha1 k + beta m over the measured points.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "apps/mp/kernels.hpp"

namespace tp::mp::kernels {

std::pair<int, int> grid_of(int p) {
    int rows = static_cast<int>(std::sqrt(double(p)));
    while (p % rows != 0) --rows;
    return {rows, p / rows};
}

std::vector<ShiftRow> shift(Comm& c, const std::vector<size_t>& sizes, int reps) {
    std::vector<ShiftRow> rows;
    size_t most = 0;
    for (size_t s : sizes) most = std::max(most, s);
    std::vector<char> buf(most, static_cast<char>(c.rank()));
    const auto [pr, pc] = grid_of(c.size());
    Cart ring = c.cart_create({c.size()}, {true});
    Cart torus = c.cart_create({pr, pc}, {true, true});
    const Cart::Shift right = ring.shift(0, 1), left = torus.shift(1, -1), up = torus.shift(0, -1);
    for (const char* grid : {"1d", "2d"}) {
        const bool two = grid[0] == '2';
        for (size_t bytes : sizes) {
            // Fewer shifts for long messages: about the same bytes moved per size.
            const int n = std::max(5, static_cast<int>(std::min<double>(reps, reps * 4096.0 / double(std::max<size_t>(bytes, 1)))));
            const int count = static_cast<int>(bytes);
            double seconds = 0;
            for (int round = -1; round < 1; ++round) {  // round -1 warms up
                c.barrier();
                const auto t0 = std::chrono::steady_clock::now();
                for (int i = 0; i < (round < 0 ? 2 : n); ++i) {
                    if (!two) {
                        c.sendrecv_replace(buf.data(), count, right.dest, 1, right.source, 1);
                    } else {
                        c.sendrecv_replace(buf.data(), count, left.dest, 1, left.source, 1);
                        c.sendrecv_replace(buf.data(), count, up.dest, 2, up.source, 2);
                    }
                }
                seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            }
            double slowest = 0;
            c.allreduce(&seconds, &slowest, 1, Op::Max);
            rows.push_back(ShiftRow{grid, bytes, slowest / (n * (two ? 2.0 : 1.0)) * 1e6});
        }
    }
    return rows;
}

// Least squares by the normal equations (3 x 3, Cramer's rule). Where k and m do not vary
// apart (one buffer size, or a backend that stages whole messages: k is 1 or follows m), the
// system is singular: alpha1 cannot be told from alpha0 and beta, and the fit drops it.
ShiftFit fit_shift(const std::vector<ShiftPoint>& pts) {
    // Columns scaled to at most 1 (pieces and bytes differ by orders of magnitude).
    double ks = 1, ms = 1;
    for (const ShiftPoint& p : pts) {
        ks = std::max(ks, p.pieces);
        ms = std::max(ms, p.bytes);
    }
    double s[3][3] = {}, r[3] = {};
    for (const ShiftPoint& p : pts) {
        const double x[3] = {1.0, p.pieces / ks, p.bytes / ms};
        for (int i = 0; i < 3; ++i) {
            r[i] += x[i] * p.us;
            for (int j = 0; j < 3; ++j) s[i][j] += x[i] * x[j];
        }
    }
    auto det3 = [](const double m[3][3]) {
        return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
               m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    };
    const double d = det3(s);
    // Relative to the product of the diagonal: scale-free test of singularity.
    if (std::fabs(d) > 1e-9 * std::fabs(s[0][0] * s[1][1] * s[2][2])) {
        double sol[3];
        for (int k = 0; k < 3; ++k) {
            double m[3][3];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) m[i][j] = j == k ? r[i] : s[i][j];
            sol[k] = det3(m) / d;
        }
        return ShiftFit{sol[0], sol[1] / ks, sol[2] / ms * 1e3, true};
    }
    // t = alpha0 + beta m.
    const double n = s[0][0], sx = s[0][2], sxx = s[2][2], sy = r[0], sxy = r[2];
    const double den = n * sxx - sx * sx;
    const double slope = den != 0 ? (n * sxy - sx * sy) / den : 0;
    return ShiftFit{n > 0 ? (sy - slope * sx) / n : 0, 0, slope / ms * 1e3, false};
}

}  // namespace tp::mp::kernels
