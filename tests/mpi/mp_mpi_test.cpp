// The message-passing API on the mpi backend, run by `mpirun -np 4`: the semantics the tiles
// backend's suite checks (tags, wildcards, order, counts, truncation, collectives against
// serial loops, Cartesian shifts, sendrecv_replace, test, MinLoc/MaxLoc and uint64_t
// reductions, split communicators), every kernel in both styles against its serial
// reference, and mp-shift's shifts on both grids. Exits 0 when every rank passed; a failed check aborts all ranks with a message.
#include <cstdint>
#include <cstdio>
#include <memory>
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

void test_and_reductions(Comm& c) {
    const int n = c.size(), r = c.rank();
    // test: false before the peer sends (it sends after the barrier), then true with the status.
    const int peer = r ^ 1;
    if (peer < n) {
        int v = -1;
        Request rq = c.irecv(&v, 1, peer, 21);
        CHECK(!c.test(rq));
        c.barrier();
        c.send(&r, 1, peer, 21);
        Status st;
        while (!c.test(rq, &st)) {
        }
        CHECK(v == peer && st.source == peer && st.tag == 21 && st.count == 1 && rq.slot == -1);
        CHECK(c.test(rq));
    } else {
        c.barrier();
    }
    // MinLoc/MaxLoc: ties keep the lowest index; uint64_t sums past 32 bits and wrap.
    DoubleInt in[2] = {{double(r % 2), 10 + r}, {double(r), r}}, lo[2], hi[2];
    c.allreduce(in, lo, 2, Op::MinLoc);
    c.allreduce(in, hi, 2, Op::MaxLoc);
    CHECK(lo[0].value == 0 && lo[0].index == 10 && lo[1].index == 0);
    CHECK(hi[0].value == (n > 1 ? 1 : 0) && hi[0].index == (n > 1 ? 11 : 10) && hi[1].index == n - 1);
    const uint64_t u[2] = {(uint64_t{1} << 40) + uint64_t(r), ~uint64_t{0}};
    uint64_t us[2];
    c.reduce(u, us, 2, Op::Sum, 0);
    if (r == 0) CHECK(us[0] == uint64_t(n) * (uint64_t{1} << 40) + uint64_t(n) * (n - 1) / 2 && us[1] == uint64_t(0) - n);
    bool threw = false;
    try {
        c.allreduce(in, lo, 2, Op::Sum);
    } catch (const Error& e) {
        threw = std::string(e.what()).find("allreduce: op sum does not take DoubleInt") != std::string::npos;
    }
    CHECK(threw);
}

void split(Comm& c) {
    const int n = c.size(), r = c.rank();
    std::unique_ptr<Comm> half = c.split(r % 2, -r);  // reversed order within each parity
    const int m = (n - r % 2 + 1) / 2;
    CHECK(half && half->size() == m && half->rank() == m - 1 - r / 2);
    int sum = 0;
    half->allreduce(&r, &sum, 1, Op::Sum);
    int want = 0;
    for (int p = r % 2; p < n; p += 2) want += p;
    CHECK(sum == want);
    // A ring in the half: any_source names the half's rank of the sender.
    if (m > 1) {
        const int right = (half->rank() + 1) % m, left = (half->rank() + m - 1) % m;
        const int h = 500 + r;
        half->send(&h, 1, right, 9);
        int got = 0;
        Status st = half->recv(&got, 1, any_source, 9);
        CHECK(st.source == left);
    }
    CHECK(c.team().size() == 1 && &half->team() == &c.team());  // an mpi rank: its own thread
    std::unique_ptr<Comm> none = c.split(r == 0 ? undefined : 1, 0);
    CHECK((none == nullptr) == (r == 0));
    c.barrier();
}

void kernels_verify(Comm& c) {
    using namespace tp::mp::kernels;
    CHECK(sgemm(c, 64).verified);
    CHECK(nbody(c, 256).verified);
    CHECK(stencil(c, 64, 10).verified);
    CHECK(fft2d(c, 64).verified);
    CHECK(sgemm(c, 64, Style::Tilepipe).verified && nbody(c, 256, Style::Tilepipe).verified);
    CHECK(stencil(c, 64, 10, Style::Tilepipe).verified && fft2d(c, 64, Style::Tilepipe).verified);
    const std::vector<ShiftRow> rows = shift(c, {8, 3000}, 3);
    CHECK(rows.size() == 4 && rows[3].us > 0);
}

}  // namespace

int main(int argc, char** argv) {
    return run_mpi(argc, argv, "mp_mpi_test", [](Comm& c) {
        p2p(c);
        truncation(c);
        collectives(c);
        cart_and_replace(c);
        test_and_reductions(c);
        split(c);
        kernels_verify(c);
        if (c.rank() == 0) std::printf("mp_mpi_test: %d ranks passed\n", c.size());
    });
}
