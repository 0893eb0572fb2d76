// 5-point Jacobi stencil on an n x n interior with fixed boundaries, split over a 2D grid of
// ranks; every sweep exchanges one-cell halos with the four neighbours (proc_null at the
// edges of the domain). The study's version weights each neighbour (9 flops per point) and
// shifts each edge through a packed buffer with sendrecv_replace, as its MPI code does;
// Style::Tilepipe averages the five (5 flops) and exchanges with sendrecv.
#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "apps/mp/timing.hpp"

namespace tp::mp::kernels {

namespace {
// Fixed boundary values: 1 along the top edge, 0.5 along the left, 0 elsewhere; interior 0.
float boundary(int i, int j, int n) {
    if (i < 0) return 1.0f;
    if (j < 0) return 0.5f;
    (void)n;
    return 0.0f;
}

// u has (h + 2) x (w + 2) cells with its halo; one sweep of rows i0 .. i1 - 1 into v.
void sweep(const float* u, float* v, int i0, int i1, int w, Style style) {
    const int s = w + 2;
    if (style == Style::Tilepipe) {
        for (int i = i0; i < i1; ++i)
            for (int j = 1; j <= w; ++j)
                v[i * s + j] =
                    0.2f * (u[i * s + j] + u[(i - 1) * s + j] + u[(i + 1) * s + j] + u[i * s + j - 1] + u[i * s + j + 1]);
        return;
    }
    // Centre, north, south, west, east: 5 multiplies, 4 adds.
    constexpr float c = 0.4f, n = 0.15f, so = 0.15f, we = 0.15f, e = 0.15f;
    for (int i = i0; i < i1; ++i)
        for (int j = 1; j <= w; ++j)
            v[i * s + j] = c * u[i * s + j] + n * u[(i - 1) * s + j] + so * u[(i + 1) * s + j] + we * u[i * s + j - 1] +
                           e * u[i * s + j + 1];
}

// Rows i0 .. i1 - 1 of a block's initial state (halo included) at (row0, col0) of the grid.
void initial_rows(float* u, int row0, int col0, int i0, int i1, int w, int n) {
    for (int i = i0; i < i1; ++i)
        for (int j = 0; j < w + 2; ++j) {
            const int gi = row0 + i - 1, gj = col0 + j - 1;
            u[i * (w + 2) + j] = gi < 0 || gj < 0 || gi >= n || gj >= n ? boundary(gi, gj, n) : 0.0f;
        }
}

std::vector<float> initial(int row0, int col0, int h, int w, int n) {
    std::vector<float> u(size_t(h + 2) * (w + 2));
    initial_rows(u.data(), row0, col0, 0, h + 2, w, n);
    return u;
}
}  // namespace

Result stencil(Comm& c, int n, int iters, Style style) {
    check_shape("mp-stencil", c.size(), n);
    const auto [pr, pc] = grid_of(c.size());
    Cart grid = c.cart_create({pr, pc}, {false, false});
    const std::vector<int> me = grid.coords(c.rank());
    const int row0 = me[0] * n / pr, row1 = (me[0] + 1) * n / pr;
    const int col0 = me[1] * n / pc, col1 = (me[1] + 1) * n / pc;
    const int h = row1 - row0, w = col1 - col0, s = w + 2;
    // The rank's block and its next state, swept by the rank's tiles (Comm::team: one tile
    // unless the rank owns several), each tile its own rows. Not touched when allocated: each
    // tile first touches the rows it sweeps, so their pages sit near it (first touch).
    Team& team = c.team();
    std::unique_ptr<float[]> u(new float[size_t(h + 2) * s]), v(new float[size_t(h + 2) * s]);
    // A tile's interior rows, the first tile's with the halo row above, the last's below.
    auto rows = [&](size_t b, size_t e, int t) {
        return std::pair<int, int>{t == 0 ? 0 : 1 + int(b), t == team.size() - 1 ? h + 2 : 1 + int(e)};
    };
    team.parallel_for(size_t(h), [&](size_t b, size_t e, int t) {
        const auto [i0, i1] = rows(b, e, t);
        initial_rows(u.get(), row0, col0, i0, i1, w, n);
        initial_rows(v.get(), row0, col0, i0, i1, w, n);
    });
    auto sweep_all = [&] {
        team.parallel_for(size_t(h), [&](size_t b, size_t e, int) { sweep(u.get(), v.get(), 1 + int(b), 1 + int(e), w, style); });
    };
    std::vector<float> out_col(h), in_col(h);
    const Cart::Shift down = grid.shift(0, 1), right = grid.shift(1, 1);
    c.barrier();
    Timing t;
    t.start();
    // The study's halo shift: an edge packed into `edge`, shifted to `to` while the neighbour's
    // edge comes from `from` into the same buffer, unpacked into the halo when there is one.
    std::vector<float> edge(std::max(h, w));
    auto shift = [&](int count, int to, int from, int tag, auto&& pack, auto&& unpack) {
        for (int k = 0; k < count; ++k) edge[k] = pack(k);
        c.sendrecv_replace(edge.data(), count, to, tag, from, tag);
        if (from != proc_null)
            for (int k = 0; k < count; ++k) unpack(k) = edge[k];
    };
    for (int it = 0; it < iters; ++it) {
        if (style == Style::Study) {
            t.comm([&] {
                // Down (last row to the halo above the rank below), up, right, left.
                shift(w, down.dest, down.source, 10, [&](int k) { return u[h * s + 1 + k]; }, [&](int k) -> float& { return u[1 + k]; });
                shift(w, down.source, down.dest, 11, [&](int k) { return u[s + 1 + k]; },
                      [&](int k) -> float& { return u[(h + 1) * s + 1 + k]; });
                shift(h, right.dest, right.source, 12, [&](int k) { return u[(k + 1) * s + w]; },
                      [&](int k) -> float& { return u[(k + 1) * s]; });
                shift(h, right.source, right.dest, 13, [&](int k) { return u[(k + 1) * s + 1]; },
                      [&](int k) -> float& { return u[(k + 1) * s + w + 1]; });
            });
            sweep_all();
            std::swap(u, v);
            continue;
        }
        t.comm([&] {
            // Rows: last interior row down / top halo from above; first row up / bottom halo from below.
            c.sendrecv(&u[h * s + 1], w, down.dest, 10, &u[1], w, down.source, 10);
            c.sendrecv(&u[s + 1], w, down.source, 11, &u[(h + 1) * s + 1], w, down.dest, 11);
            // Columns, packed.
            for (int i = 0; i < h; ++i) out_col[i] = u[(i + 1) * s + w];
            c.sendrecv(out_col.data(), h, right.dest, 12, in_col.data(), h, right.source, 12);
            if (right.source != proc_null)
                for (int i = 0; i < h; ++i) u[(i + 1) * s] = in_col[i];
            for (int i = 0; i < h; ++i) out_col[i] = u[(i + 1) * s + 1];
            c.sendrecv(out_col.data(), h, right.source, 13, in_col.data(), h, right.dest, 13);
            if (right.dest != proc_null)
                for (int i = 0; i < h; ++i) u[(i + 1) * s + w + 1] = in_col[i];
        });
        sweep_all();
        // The halo of v keeps the boundary values; its interior is the new state.
        std::swap(u, v);
    }
    t.stop();

    // Rank 0 gathers the blocks and compares with a serial run of the same sweeps.
    bool ok = true;
    if (c.rank() == 0) {
        std::vector<float> ref = initial(0, 0, n, n, n), tmp = ref;
        for (int it = 0; it < iters; ++it) {
            sweep(ref.data(), tmp.data(), 1, n + 1, n, style);
            std::swap(ref, tmp);
        }
        std::vector<float> block;
        for (int r = 0; r < c.size(); ++r) {
            const std::vector<int> rc = grid.coords(r);
            const int r0 = rc[0] * n / pr, r1 = (rc[0] + 1) * n / pr, c0 = rc[1] * n / pc, c1 = (rc[1] + 1) * n / pc;
            const int bh = r1 - r0, bw = c1 - c0;
            block.assign(size_t(bh) * bw, 0.0f);
            if (r == 0) {
                for (int i = 0; i < bh; ++i)
                    for (int j = 0; j < bw; ++j) block[i * bw + j] = u[(i + 1) * s + j + 1];
            } else {
                c.recv(block.data(), bh * bw, r, 20);
            }
            for (int i = 0; i < bh; ++i)
                for (int j = 0; j < bw; ++j)
                    ok &= std::fabs(block[i * bw + j] - ref[(r0 + i + 1) * (n + 2) + c0 + j + 1]) <= 1e-5f;
        }
    } else {
        std::vector<float> block(size_t(h) * w);
        for (int i = 0; i < h; ++i)
            for (int j = 0; j < w; ++j) block[i * w + j] = u[(i + 1) * s + j + 1];
        c.send(block.data(), h * w, 0, 20);
    }
    return t.reduce(c, (style == Style::Study ? 9.0 : 5.0) * double(n) * n * iters, ok);
}

}  // namespace tp::mp::kernels
