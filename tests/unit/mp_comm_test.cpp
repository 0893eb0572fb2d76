// The message-passing calls beyond the basic set on the tiles backend: test (MPI_Test),
// MinLoc/MaxLoc reductions on (double, int) pairs and uint64_t reductions against serial
// computations, split communicators (their ranks, their isolation from the parent's
// messages, their collectives, and the errors naming their ranks), and the teams of ranks
// that own several tiles.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tilepipe/mp.hpp"
#include "tests/support/mp_run.hpp"

using namespace tp::mp;
using tp::mp::test::error_of;
using tp::mp::test::ranks;


TEST(MpTest, FalseUntilTheMessageComesThenCompletesLikeWait) {
    run_tiles(ranks(2), [](Comm& c) {
        if (c.rank() == 1) {
            int v[3] = {0, 0, 0};
            Request r = c.irecv(v, 3, 0, 4);
            // Rank 0 sends only after the barrier: nothing can have come yet.
            EXPECT_FALSE(c.test(r));
            c.barrier();
            Status st;
            while (!c.test(r, &st)) {
            }
            EXPECT_EQ(r.slot, -1);
            EXPECT_EQ(st.source, 0);
            EXPECT_EQ(st.tag, 4);
            EXPECT_EQ(st.count, 2);
            EXPECT_EQ(v[1], 22);
            // An empty (completed) request tests true at once, with an empty status.
            EXPECT_TRUE(c.test(r, &st));
            EXPECT_EQ(st.source, proc_null);
            // A long send completes under test too.
            std::vector<double> big(20000, 1.5);
            Request s = c.isend(big.data(), 20000, 0, 5);
            while (!c.test(s)) {
            }
        } else {
            c.barrier();
            const int v[2] = {11, 22};
            c.send(v, 2, 1, 4);
            std::vector<double> big(20000);
            c.recv(big.data(), 20000, 1, 5);
            EXPECT_EQ(big[19999], 1.5);
        }
    });
}

TEST(MpTest, PollingForAMessageFromAFinishedRankIsAnErrorNotAHang) {
    const std::string e = error_of(ranks(2), [](Comm& c) {
        if (c.rank() == 0) return;
        int v = 0;
        Request r = c.irecv(&v, 1, 0, 0);
        while (!c.test(r)) {
        }
    });
    EXPECT_NE(e.find("rank 1: test: waiting for a message from rank 0, which has finished"), std::string::npos) << e;
}

TEST(MpReduceLoc, MinLocAndMaxLocMatchSerialWithTiesToTheLowestIndex) {
    for (int n : {1, 3, 6}) {
        run_tiles(ranks(n), [n](Comm& c) {
            // Element 0: distinct values; element 1: every rank ties (lowest index wins);
            // element 2: ranks 1 and n-1 tie on the extreme.
            const int r = c.rank();
            DoubleInt in[3] = {{double((r * 7) % n), 100 + r}, {2.5, 50 - r}, {r == 1 || r == n - 1 ? 9.0 : 1.0, r}};
            DoubleInt lo[3], hi[3];
            c.allreduce(in, lo, 3, Op::MinLoc);
            c.reduce(in, hi, 3, Op::MaxLoc, n - 1);
            DoubleInt want_lo[3], want_hi[3];
            for (int e = 0; e < 3; ++e) {
                want_lo[e] = want_hi[e] = DoubleInt{0, 0};
                bool first = true;
                for (int p = 0; p < n; ++p) {
                    const DoubleInt x[3] = {{double((p * 7) % n), 100 + p}, {2.5, 50 - p},
                                            {p == 1 || p == n - 1 ? 9.0 : 1.0, p}};
                    const DoubleInt v = x[e];
                    if (first || v.value < want_lo[e].value || (v.value == want_lo[e].value && v.index < want_lo[e].index))
                        want_lo[e] = v;
                    if (first || v.value > want_hi[e].value || (v.value == want_hi[e].value && v.index < want_hi[e].index))
                        want_hi[e] = v;
                    first = false;
                }
                EXPECT_EQ(lo[e].value, want_lo[e].value) << "n " << n << " element " << e;
                EXPECT_EQ(lo[e].index, want_lo[e].index) << "n " << n << " element " << e;
                if (r == n - 1) {
                    EXPECT_EQ(hi[e].value, want_hi[e].value) << "n " << n << " element " << e;
                    EXPECT_EQ(hi[e].index, want_hi[e].index) << "n " << n << " element " << e;
                }
            }
            EXPECT_EQ(lo[1].index, 50 - (n - 1));  // all tie: the lowest index
        });
    }
}

TEST(MpReduceLoc, UInt64SumsPastThirtyTwoBitsAndWrap) {
    run_tiles(ranks(4), [](Comm& c) {
        const uint64_t big = uint64_t{3} << 40;
        uint64_t in[3] = {big + uint64_t(c.rank()), ~uint64_t{0} - uint64_t(c.rank()), uint64_t{1} << 63};
        uint64_t sum[3], mx[3];
        c.allreduce(in, sum, 3, Op::Sum);
        c.allreduce(in, mx, 3, Op::Max);
        EXPECT_EQ(sum[0], 4 * big + 6);
        EXPECT_EQ(sum[1], uint64_t(0) - 4 - 6);  // four values near 2^64: wraps modulo 2^64
        EXPECT_EQ(sum[2], uint64_t{0});
        EXPECT_EQ(mx[1], ~uint64_t{0});  // unsigned: above INT64_MAX
    });
}

TEST(MpReduceLoc, AnOpThatDoesNotFitTheTypeIsAnError) {
    const std::string a = error_of(ranks(2), [](Comm& c) {
        DoubleInt v{1, 0}, out{};
        c.allreduce(&v, &out, 1, Op::Sum);
    });
    EXPECT_NE(a.find(": allreduce: op sum does not take DoubleInt elements (minloc or maxloc does)"), std::string::npos)
        << a;
    const std::string b = error_of(ranks(2), [](Comm& c) {
        double v = 1, out = 0;
        c.reduce(&v, &out, 1, Op::MinLoc, 0);
    });
    EXPECT_NE(b.find(": reduce: op minloc takes DoubleInt elements only"), std::string::npos) << b;
}

TEST(MpSplit, RanksFollowKeysAndMessagesStayInTheirCommunicator) {
    run_tiles(ranks(6), [](Comm& c) {
        const int r = c.rank();
        // Two halves, odd and even, each ranked in reverse of the world's order.
        std::unique_ptr<Comm> half = c.split(r % 2, -r);
        ASSERT_TRUE(half);
        EXPECT_EQ(half->size(), 3);
        EXPECT_EQ(half->rank(), 2 - r / 2);
        EXPECT_STREQ(half->backend(), "tiles");
        // The same peer, the same tag, world and half: each receive takes its own
        // communicator's message, whichever was sent first.
        const int hr = half->rank(), right = (hr + 1) % 3, left = (hr + 2) % 3;
        const int world_right = (r + 2) % 6;  // the next of the same parity in the world
        const int w = 1000 + r, h = 2000 + r;
        c.send(&w, 1, world_right, 7);
        half->send(&h, 1, right, 7);
        int got_h = 0, got_w = 0;
        Status st = half->recv(&got_h, 1, any_source, 7);
        EXPECT_EQ(st.source, left);  // the half's rank, not the world's
        c.recv(&got_w, 1, (r + 4) % 6, 7);
        EXPECT_EQ(got_w, 1000 + (r + 4) % 6);
        EXPECT_EQ(got_h - 2000, (r + 2) % 6);  // the half's left: the world's next of its parity
        // Collectives over the half only.
        int sum = 0;
        half->allreduce(&r, &sum, 1, Op::Sum);
        EXPECT_EQ(sum, r % 2 ? 1 + 3 + 5 : 0 + 2 + 4);
        int root_value = r;
        half->bcast(&root_value, 1, 0);  // the half's rank 0: the world's highest of its parity
        EXPECT_EQ(root_value, r % 2 ? 5 : 4);
        half->barrier();
        // A split of a split, and a rank left out.
        std::unique_ptr<Comm> pair = half->split(half->rank() == 0 ? undefined : 0, 0);
        EXPECT_EQ(pair == nullptr, half->rank() == 0);
        if (pair) {
            EXPECT_EQ(pair->size(), 2);
            int x = 1, n = 0;
            pair->allreduce(&x, &n, 1, Op::Sum);
            EXPECT_EQ(n, 2);
        }
        c.barrier();
    });
}

TEST(MpSplit, CommunicatorsOfTheSameMembersNeverShareMessages) {
    // Splits made one after another (and one beside a rank's other split) over the same ranks:
    // a message on the first never matches a receive on the second.
    run_tiles(ranks(4), [](Comm& c) {
        std::unique_ptr<Comm> a = c.split(0, c.rank());
        std::unique_ptr<Comm> b = c.split(0, c.rank());
        std::unique_ptr<Comm> odd = c.split(c.rank() % 2, 0);
        const int peer = c.rank() ^ 1;
        const int va = 1, vb = 2;
        a->send(&va, 1, peer, 0);
        b->send(&vb, 1, peer, 0);
        int got = 0;
        b->recv(&got, 1, peer, 0);
        EXPECT_EQ(got, 2);
        a->recv(&got, 1, peer, 0);
        EXPECT_EQ(got, 1);
        int t = 0, s = 0;
        odd->allreduce(&t, &s, 1, Op::Sum);
    });
}

TEST(MpSplit, ErrorsNameTheRanksOfTheSplitCommunicator) {
    const std::string bad = error_of(ranks(4), [](Comm& c) {
        std::unique_ptr<Comm> s = c.split(c.rank() / 2, -c.rank());
        int v = 0;
        if (c.rank() == 3) s->send(&v, 1, 2, 0);  // world rank 3 is rank 0 of its pair
    });
    EXPECT_NE(bad.find("rank 0: send: destination rank 2 is out of range (size 2)"), std::string::npos) << bad;

    const std::string gone = error_of(ranks(4), [](Comm& c) {
        std::unique_ptr<Comm> s = c.split(c.rank() / 2, 0);
        int v = 0;
        if (c.rank() == 3) s->recv(&v, 1, 0, 0);  // world rank 2, which returns
    });
    EXPECT_NE(gone.find("rank 1: recv: waiting for a message from rank 0, which has finished"), std::string::npos)
        << gone;

    const std::string mismatch = error_of(ranks(4), [](Comm& c) {
        std::unique_ptr<Comm> s = c.split(0, -c.rank());
        int v = 0;
        if (s->rank() == 0) s->bcast(&v, 1, 0);
        else s->barrier();
    });
    EXPECT_NE(mismatch.find("collective mismatch"), std::string::npos) << mismatch;

    const std::string color = error_of(ranks(2), [](Comm& c) { c.split(-4, 0); });
    EXPECT_NE(color.find(": split: color -4 is negative (and not mp::undefined)"), std::string::npos) << color;
}

TEST(MpTeam, ARanksTilesShareItsLoopsEachTileAlwaysTheSameChunk) {
    TilesOptions o = ranks(2);
    o.tiles_per_rank = 3;
    run_tiles(o, [](Comm& c) {
        Team& team = c.team();
        ASSERT_EQ(team.size(), 3);
        const std::thread::id me = std::this_thread::get_id();
        std::vector<int> hits(100, 0);
        std::vector<std::thread::id> who(3), again(3);
        std::vector<std::pair<size_t, size_t>> chunk(3);
        team.parallel_for(100, [&](size_t b, size_t e, int t) {
            who[t] = std::this_thread::get_id();
            chunk[t] = {b, e};
            for (size_t i = b; i < e; ++i) ++hits[i];
        });
        EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 100);  // every index once
        EXPECT_EQ(who[0], me);                                     // tile 0: the rank's thread
        EXPECT_NE(who[1], me);
        EXPECT_NE(who[1], who[2]);
        EXPECT_EQ(chunk[1], (std::pair<size_t, size_t>{33, 66}));
        team.parallel_for(100, [&](size_t, size_t, int t) { again[t] = std::this_thread::get_id(); });
        EXPECT_EQ(again, who);  // the same tile (and its first-touched pages) for the same chunk
        // A split communicator shares its rank's team.
        std::unique_ptr<Comm> all = c.split(0, 0);
        EXPECT_EQ(&all->team(), &team);
    });
}

TEST(MpTeam, AFailingChunkIsAnErrorNamingRankAndCall) {
    TilesOptions o = ranks(2);
    o.tiles_per_rank = 2;
    const std::string e = error_of(o, [](Comm& c) {
        if (c.rank() == 1)
            c.team().parallel_for(10, [](size_t, size_t, int t) {
                if (t == 1) throw std::runtime_error("bad chunk");
            });
    });
    EXPECT_NE(e.find("rank 1: parallel_for:"), std::string::npos) << e;
    EXPECT_NE(e.find("bad chunk"), std::string::npos) << e;
    o.tiles_per_rank = 0;
    EXPECT_THROW(run_tiles(o, [](Comm&) {}), std::invalid_argument);
    // One tile per rank (and every mpi rank): the rank's own thread.
    run_tiles(ranks(1), [](Comm& c) { EXPECT_EQ(c.team().size(), 1); });
}

TEST(MpTeam, UnpinnedRanksHaveUnpinnedHelpers) {
    // Not pinned: a helper may run on any CPU the process may, as its rank does (pinned by
    // default to the mask's next CPU, every rank's helper would share one CPU).
    cpu_set_t process;
    ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
    TilesOptions o = ranks(2);
    o.tiles_per_rank = 2;
    run_tiles(o, [&](Comm& c) {
        int helper_cpus = -1;
        c.team().parallel_for(2, [&](size_t, size_t, int t) {
            cpu_set_t mine;
            if (t == 1 && sched_getaffinity(0, sizeof(mine), &mine) == 0) helper_cpus = CPU_COUNT(&mine);
        });
        EXPECT_EQ(helper_cpus, CPU_COUNT(&process));
    });
}
