// 2D FFT: each rank transforms its n/p rows, the ranks exchange r x r blocks (the corner
// turn: all-to-all with isend/irecv, each block transposed on arrival), and transform their
// rows again. Rank q then holds columns q*r .. q*r + r - 1 of the 2D transform, as rows; the
// study's version turns the corners once more (timed), so rank q holds rows q*r .. of the
// transform in the layout its input had.
#include <cmath>
#include <complex>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "apps/mp/timing.hpp"

namespace tp::mp::kernels {

namespace {
using cf = std::complex<float>;

// In-place radix-2 FFT of x[0..n) (n a power of two); `tw` holds exp(-2 pi i k / n), k < n/2.
void fft(cf* x, int n, const std::vector<cf>& tw) {
    for (int i = 1, j = 0; i < n; ++i) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) std::swap(x[i], x[j]);
    }
    for (int len = 2; len <= n; len <<= 1) {
        const int step = n / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < len / 2; ++k) {
                const cf u = x[i + k], v = x[i + k + len / 2] * tw[k * step];
                x[i + k] = u + v;
                x[i + k + len / 2] = u - v;
            }
    }
}

cf input_at(int i, int j) { return cf(std::sin(i * 0.3f + j * 0.7f), std::cos(i * 0.11f - j * 0.5f)); }
}  // namespace

Result fft2d(Comm& c, int n, Style style) {
    check_shape("mp-fft", c.size(), n);
    const int p = c.size(), r = n / p, me = c.rank();
    std::vector<cf> tw(n / 2);
    for (int k = 0; k < n / 2; ++k) tw[k] = std::polar(1.0f, static_cast<float>(-2.0 * M_PI * k / n));
    std::vector<cf> rows(size_t(r) * n), turned(size_t(r) * n);
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < n; ++j) rows[size_t(i) * n + j] = input_at(me * r + i, j);
    std::vector<cf> out(size_t(p) * r * r), in(size_t(p) * r * r);  // one r x r block per rank
    Timing t;
    auto t_comm = [&](auto&& f) { t.comm(f); };
    std::vector<Request> reqs(2 * size_t(p));
    const int block = 2 * r * r;  // floats per block
    // The corner turn: `from` (r rows of n) becomes `to` holding, as rows, the r columns of
    // the whole matrix this rank owns (all-to-all of r x r blocks, each transposed on arrival).
    auto corner_turn = [&](const std::vector<cf>& from, std::vector<cf>& to) {
        for (int q = 0; q < p; ++q)  // block q: my rows, columns q*r ..
            for (int i = 0; i < r; ++i)
                for (int j = 0; j < r; ++j) out[(size_t(q) * r + i) * r + j] = from[size_t(i) * n + q * r + j];
        t_comm([&] {
            for (int q = 0; q < p; ++q) {
                reqs[2 * q] = c.irecv(reinterpret_cast<float*>(&in[size_t(q) * r * r]), block, q, 30);
                reqs[2 * q + 1] = c.isend(reinterpret_cast<const float*>(&out[size_t(q) * r * r]), block, q, 30);
            }
            c.waitall(reqs);
        });
        // Block from rank s holds rows s*r.. of my columns: transpose into my new rows.
        for (int s = 0; s < p; ++s)
            for (int i = 0; i < r; ++i)
                for (int j = 0; j < r; ++j) to[size_t(j) * n + s * r + i] = in[(size_t(s) * r + i) * r + j];
    };
    c.barrier();
    t.start();
    for (int i = 0; i < r; ++i) fft(&rows[size_t(i) * n], n, tw);
    corner_turn(rows, turned);
    for (int i = 0; i < r; ++i) fft(&turned[size_t(i) * n], n, tw);
    if (style == Style::Study) corner_turn(turned, rows);  // rows: my rows of the transform
    t.stop();

    // Serial reference: the whole transform, rows then columns.
    std::vector<cf> ref(size_t(n) * n), col(n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) ref[size_t(i) * n + j] = input_at(i, j);
    for (int i = 0; i < n; ++i) fft(&ref[size_t(i) * n], n, tw);
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) col[i] = ref[size_t(i) * n + j];
        fft(col.data(), n, tw);
        for (int i = 0; i < n; ++i) ref[size_t(i) * n + j] = col[i];
    }
    // Study: my rows of X; Tilepipe: my columns of X, as rows.
    bool ok = true;
    for (int a = 0; a < r; ++a)
        for (int b = 0; b < n; ++b) {
            const cf want = style == Style::Study ? ref[size_t(me * r + a) * n + b] : ref[size_t(b) * n + me * r + a];
            const cf got = style == Style::Study ? rows[size_t(a) * n + b] : turned[size_t(a) * n + b];
            ok &= std::abs(got - want) <= 1e-3f * (1.0f + std::abs(want));
        }
    return t.reduce(c, 5.0 * double(n) * n * std::log2(double(n) * n), ok);
}

}  // namespace tp::mp::kernels
