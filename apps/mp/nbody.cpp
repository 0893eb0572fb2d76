// N-body: each rank owns n/p particles and computes their accelerations against all n by
// passing a travelling copy of the blocks round the ring (sendrecv_replace), p steps.
#include <cmath>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "apps/mp/timing.hpp"

namespace tp::mp::kernels {

namespace {
constexpr float kSoftening = 0.01f;

struct Body {
    float x, y, z, m;
};
Body body_at(int i) {
    return Body{std::sin(i * 0.37f) * 10, std::cos(i * 0.91f) * 10, std::sin(i * 1.7f + 1) * 10, 1.0f + (i % 7) * 0.25f};
}

// Accelerations of `mine` due to `other` (20 flops per pair, the usual count).
void accumulate(const std::vector<Body>& mine, const std::vector<Body>& other, std::vector<float>& acc) {
    for (size_t i = 0; i < mine.size(); ++i) {
        float ax = 0, ay = 0, az = 0;
        for (const Body& o : other) {
            const float dx = o.x - mine[i].x, dy = o.y - mine[i].y, dz = o.z - mine[i].z;
            const float r2 = dx * dx + dy * dy + dz * dz + kSoftening;
            const float inv = 1.0f / std::sqrt(r2);
            const float s = o.m * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        acc[3 * i] += ax;
        acc[3 * i + 1] += ay;
        acc[3 * i + 2] += az;
    }
}
}  // namespace

Result nbody(Comm& c, int n) {
    check_shape("mp-nbody", c.size(), n);
    const int p = c.size(), m = n / p;
    std::vector<Body> mine(m), travel(m);
    for (int i = 0; i < m; ++i) mine[i] = body_at(c.rank() * m + i);
    travel = mine;
    std::vector<float> acc(size_t(3) * m, 0.0f);
    Cart ring = c.cart_create({p}, {true});
    const Cart::Shift next = ring.shift(0, 1);
    const int words = m * 4;  // a Body is four floats
    c.barrier();
    Timing t;
    t.start();
    for (int step = 0; step < p; ++step) {
        accumulate(mine, travel, acc);
        if (step + 1 == p) break;
        t.comm([&] { c.sendrecv_replace(reinterpret_cast<float*>(travel.data()), words, next.dest, 3, next.source, 3); });
    }
    t.stop();

    std::vector<Body> all(n);
    for (int i = 0; i < n; ++i) all[i] = body_at(i);
    std::vector<float> want(size_t(3) * m, 0.0f);
    accumulate(mine, all, want);
    bool ok = true;
    for (size_t i = 0; i < want.size(); ++i)
        ok &= std::fabs(acc[i] - want[i]) <= 1e-3f * (1.0f + std::fabs(want[i]));
    return t.reduce(c, 20.0 * double(n) * n, ok);
}

}  // namespace tp::mp::kernels
