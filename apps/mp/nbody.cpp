// N-body: each rank owns n/p particles and computes their accelerations against all n by
// passing a travelling copy of the blocks round the ring (sendrecv_replace), p - 1 shifts.
// The study runs time steps: after the accelerations every rank moves its own particles
// (velocity, then position, by dt) before the next step's ring; Style::Tilepipe runs the
// accelerations once.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "apps/mp/timing.hpp"

namespace tp::mp::kernels {

namespace {
constexpr float kSoftening = 0.01f;
constexpr float kDt = 0.001f;  // the time step

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
// One time step's move of `bodies` by their accelerations (12 flops per body).
void advance(std::vector<Body>& bodies, std::vector<float>& vel, const std::vector<float>& acc) {
    for (size_t i = 0; i < bodies.size(); ++i) {
        vel[3 * i] += acc[3 * i] * kDt;
        vel[3 * i + 1] += acc[3 * i + 1] * kDt;
        vel[3 * i + 2] += acc[3 * i + 2] * kDt;
        bodies[i].x += vel[3 * i] * kDt;
        bodies[i].y += vel[3 * i + 1] * kDt;
        bodies[i].z += vel[3 * i + 2] * kDt;
    }
}

// Rank 0 gathers every rank's bodies and runs the same steps serially; the verdict is shared.
Result verify_steps(Comm& c, const Timing& t, const std::vector<Body>& mine, int n, int steps) {
    const int m = static_cast<int>(mine.size()), words = m * 4;
    bool ok = true;
    if (c.rank() == 0) {
        std::vector<Body> got(n), all(n);
        std::copy(mine.begin(), mine.end(), got.begin());
        for (int r = 1; r < c.size(); ++r) c.recv(reinterpret_cast<float*>(&got[size_t(r) * m]), words, r, 4);
        for (int i = 0; i < n; ++i) all[i] = body_at(i);
        std::vector<float> acc(size_t(3) * n), vel(size_t(3) * n, 0.0f);
        for (int s = 0; s < steps; ++s) {
            std::fill(acc.begin(), acc.end(), 0.0f);
            accumulate(all, all, acc);
            advance(all, vel, acc);
        }
        for (int i = 0; i < n; ++i)
            for (float d : {got[i].x - all[i].x, got[i].y - all[i].y, got[i].z - all[i].z})
                ok &= std::fabs(d) <= 1e-3f * (1.0f + std::fabs(all[i].x) + std::fabs(all[i].y) + std::fabs(all[i].z));
    } else {
        c.send(reinterpret_cast<const float*>(mine.data()), words, 0, 4);
    }
    return t.reduce(c, (20.0 * double(n) * n + 12.0 * n) * steps, ok);
}
}  // namespace

Result nbody(Comm& c, int n, Style style, int steps) {
    check_shape("mp-nbody", c.size(), n);
    if (style == Style::Tilepipe) steps = 1;
    if (steps < 1) throw std::invalid_argument("mp-nbody: --steps must be at least 1");
    const int p = c.size(), m = n / p;
    std::vector<Body> mine(m), travel(m);
    for (int i = 0; i < m; ++i) mine[i] = body_at(c.rank() * m + i);
    std::vector<float> acc(size_t(3) * m, 0.0f), vel(size_t(3) * m, 0.0f);
    Cart ring = c.cart_create({p}, {true});
    const Cart::Shift next = ring.shift(0, 1);
    const int words = m * 4;  // a Body is four floats
    c.barrier();
    Timing t;
    t.start();
    for (int s = 0; s < steps; ++s) {
        travel = mine;
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int step = 0; step < p; ++step) {
            accumulate(mine, travel, acc);
            if (step + 1 == p) break;
            t.comm([&] { c.sendrecv_replace(reinterpret_cast<float*>(travel.data()), words, next.dest, 3, next.source, 3); });
        }
        if (style == Style::Study) advance(mine, vel, acc);
    }
    t.stop();
    if (style == Style::Study) return verify_steps(c, t, mine, n, steps);

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
