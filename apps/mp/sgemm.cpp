// Cannon's algorithm: rank (i, j) of a q x q periodic grid holds blocks of A and B; after the
// initial skew (row i of A left by i, column j of B up by j) each of q steps multiplies the
// blocks it holds and shifts A left and B up by one with sendrecv_replace. The study times
// the q steps; the skew is set-up before them (Style::Tilepipe times it too).
#include <cmath>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "apps/mp/timing.hpp"

namespace tp::mp::kernels {

namespace {
// Small integers: every product and sum is exact in float, so the check is exact.
float a_at(int i, int j) { return static_cast<float>((i * 7 + j * 3) % 5 - 2); }
float b_at(int i, int j) { return static_cast<float>((i * 2 + j * 5) % 7 - 3); }

void multiply_add(const float* a, const float* b, float* c, int m) {
    for (int i = 0; i < m; ++i)
        for (int k = 0; k < m; ++k) {
            const float aik = a[i * m + k];
            for (int j = 0; j < m; ++j) c[i * m + j] += aik * b[k * m + j];
        }
}
}  // namespace

Result sgemm(Comm& c, int n, Style style) {
    check_shape("mp-sgemm", c.size(), n);
    const int q = static_cast<int>(std::lround(std::sqrt(c.size())));
    const int m = n / q;
    Cart grid = c.cart_create({q, q}, {true, true});
    const std::vector<int> me = grid.coords(c.rank());
    const int row = me[0], col = me[1];
    std::vector<float> a(size_t(m) * m), b(size_t(m) * m), cc(size_t(m) * m, 0.0f);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
            a[i * m + j] = a_at(row * m + i, col * m + j);
            b[i * m + j] = b_at(row * m + i, col * m + j);
        }
    const int count = m * m;
    auto skew = [&] {
        const Cart::Shift sa = grid.shift(1, -row), sb = grid.shift(0, -col);
        c.sendrecv_replace(a.data(), count, sa.dest, 1, sa.source, 1);
        c.sendrecv_replace(b.data(), count, sb.dest, 2, sb.source, 2);
    };
    // The study skews before its clock starts (data distribution, as the blocks' loading).
    if (style == Style::Study) skew();
    c.barrier();
    Timing t;
    t.start();
    if (style == Style::Tilepipe) t.comm(skew);
    const Cart::Shift left = grid.shift(1, -1), up = grid.shift(0, -1);
    for (int step = 0; step < q; ++step) {
        multiply_add(a.data(), b.data(), cc.data(), m);
        if (step + 1 == q) break;
        t.comm([&] {
            c.sendrecv_replace(a.data(), count, left.dest, 1, left.source, 1);
            c.sendrecv_replace(b.data(), count, up.dest, 2, up.source, 2);
        });
    }
    t.stop();

    bool ok = true;
    for (int i = 0; i < m && ok; ++i)
        for (int j = 0; j < m; ++j) {
            float want = 0;
            for (int k = 0; k < n; ++k) want += a_at(row * m + i, k) * b_at(k, col * m + j);
            if (cc[i * m + j] != want) {
                ok = false;
                break;
            }
        }
    return t.reduce(c, 2.0 * n * n * double(n), ok);
}

}  // namespace tp::mp::kernels
