// The message-passing API on the mpi backend, run by `mpirun -np 4`: the semantics the tiles
// backend's suite checks (tags, wildcards, order, counts, truncation, collectives against
// serial loops, Cartesian shifts, sendrecv_replace) and every kernel against its serial
// reference. Exits 0 when every rank passed; a failed check aborts all ranks with a message.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/mp/kernels.hpp"
#include "tilepipe/mp.hpp"

using namespace tp::mp;

namespace {

#define CHECK(cond)                                                                                 \
    do {                                                                                            \
        if (!(cond)) throw std::runtime_error(std::string("check failed at line ") +               \
                                              std::to_string(__LINE__) + ": " #cond);               \
    } while (0)

void p2p(Comm& c) {
    const int n = c.size(), r = c.rank();
    // Pair order per tag, tags selecting: rank 0 sends 0..9 to 1 alternating tags 5/6.
    if (r == 0)
        for (int i = 0; i < 10; ++i) c.send(&i, 1, 1, i % 2 ? 6 : 5);
    if (r == 1) {
        for (int i = 0; i < 5; ++i) {
            int v = -1;
            Status s = c.recv(&v, 1, 0, 6);
            CHECK(v == 2 * i + 1 && s.tag == 6 && s.source == 0 && s.count == 1);
        }
        for (int i = 0; i < 5; ++i) {
            int v = -1;
            c.recv(&v, 1, 0, any_tag);
            CHECK(v == 2 * i);
        }
    }
    // any_source: everyone sends rank-many ints to the last rank (one tag: the long message
    // below, tag 7, must not match here).
    if (r != n - 1) {
        std::vector<int> v(r + 1, r);
        c.send(v.data(), r + 1, n - 1, 40);
    } else {
        std::vector<bool> seen(n, false);
        for (int i = 0; i < n - 1; ++i) {
            std::vector<int> v(64, -1);
            Status s = c.recv(v.data(), 64, any_source, 40);
            CHECK(!seen[s.source] && s.tag == 40 && s.count == s.source + 1 && v[s.source] == s.source);
            seen[s.source] = true;
        }
    }
    // Nonblocking both ways with a long message.
    const int peer = r ^ 1;
    if (peer < n) {
        std::vector<double> out(100000, r), in(100000, -1);
        Request rq[2] = {c.irecv(in.data(), 100000, peer, 7), c.isend(out.data(), 100000, peer, 7)};
        std::vector<Status> st = c.waitall(rq);
        CHECK(st[0].count == 100000 && in[99999] == peer);
    }
    c.barrier();
}

void truncation(Comm& c) {
    if (c.size() < 2) return;
    std::vector<int> v(100, 1);
    if (c.rank() == 0) {
        Request rq = c.isend(v.data(), 100, 1, 99);
        c.wait(rq);
    }
    if (c.rank() == 1) {
        bool threw = false;
        try {
            c.recv(v.data(), 50, 0, 99);
        } catch (const Error& e) {
            threw = std::string(e.what()).find("rank 1: recv: message truncated") != std::string::npos;
        }
        CHECK(threw);
    }
    c.barrier();
}

void collectives(Comm& c) {
    const int n = c.size(), r = c.rank();
    for (int root = 0; root < n; ++root) {
        std::vector<int> v(1000, r == root ? root + 7 : 0);
        c.bcast(v.data(), 1000, root);
        CHECK(v[0] == root + 7 && v[999] == root + 7);
    }
    int x = r + 1, sum = 0, mx = 0, mn = 0;
    c.reduce(&x, &sum, 1, Op::Sum, n - 1);
    if (r == n - 1) CHECK(sum == n * (n + 1) / 2);
    double d = 0.5 * (r + 1), dmax = 0;
    c.allreduce(&d, &dmax, 1, Op::Max);
    CHECK(dmax == 0.5 * n);
    float f = static_cast<float>(r + 1), fmin = 0;
    c.allreduce(&f, &fmin, 1, Op::Min);
    CHECK(fmin == 1.0f);
    c.allreduce(&x, &mx, 1, Op::Max);
    c.allreduce(&x, &mn, 1, Op::Sum);
    CHECK(mx == n && mn == n * (n + 1) / 2);
}

void cart_and_replace(Comm& c) {
    const int n = c.size(), r = c.rank();
    Cart ring = c.cart_create({n}, {true});
    const Cart::Shift s = ring.shift(0, 1);
    CHECK(s.dest == (r + 1) % n && s.source == (r + n - 1) % n);
    Cart line = c.cart_create({n}, {false});
    CHECK(line.shift(0, 1).dest == (r == n - 1 ? proc_null : r + 1));
    std::vector<int> v(50000, r);
    Status st = c.sendrecv_replace(v.data(), 50000, s.dest, 3, s.source, 3);
    CHECK(st.count == 50000 && v[0] == (r + n - 1) % n && v[49999] == (r + n - 1) % n);
}

void kernels_verify(Comm& c) {
    using namespace tp::mp::kernels;
    CHECK(sgemm(c, 64).verified);
    CHECK(nbody(c, 256).verified);
    CHECK(stencil(c, 64, 10).verified);
    CHECK(fft2d(c, 64).verified);
}

}  // namespace

int main(int argc, char** argv) {
    return run_mpi(argc, argv, "mp_mpi_test", [](Comm& c) {
        p2p(c);
        truncation(c);
        collectives(c);
        cart_and_replace(c);
        kernels_verify(c);
        if (c.rank() == 0) std::printf("mp_mpi_test: %d ranks passed\n", c.size());
    });
}
