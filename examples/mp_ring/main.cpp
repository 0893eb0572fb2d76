// mp_ring [--ranks N] [--laps K]: a token goes round a ring of ranks K times, each rank adding
// one as it passes; rank 0 prints what came back and the program exits 1 unless it is N x K.
//
// Built twice from this file: `mp_ring` runs its ranks as threads on tiles (tp::mp::run_tiles,
// in libtilepipe); `mp_ring_mpi` (-DMP_RING_MPI, linked with libtilepipe-mpi) is one rank of
// an Open MPI job: `mpirun -np 4 ./mp_ring_mpi`. The ring itself is the same code.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>

#include <tilepipe/mp.hpp>

namespace {

// One rank's part of the ring; true when the token came back right (rank 0 checks it).
bool ring(tp::mp::Comm& c, int laps) {
    const int right = (c.rank() + 1) % c.size();
    const int left = (c.rank() + c.size() - 1) % c.size();
    int token = 0;
    for (int lap = 0; lap < laps; ++lap) {
        if (c.rank() == 0) {  // starts each lap, and takes the token back at its end
            ++token;
            c.send(&token, 1, right, lap);
            const tp::mp::Status st = c.recv(&token, 1, left, lap);
            if (st.source != left || st.count != 1) return false;
        } else {
            c.recv(&token, 1, left, lap);
            ++token;
            c.send(&token, 1, right, lap);
        }
    }
    if (c.rank() != 0) return true;
    std::printf("%s: token %d after %d laps of %d ranks\n", c.backend(), token, laps, c.size());
    return token == laps * c.size();
}

}  // namespace

int main(int argc, char** argv) {
    int ranks = 4, laps = 3;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) ranks = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--laps") == 0 && i + 1 < argc) laps = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--ranks N] [--laps K]\n", argv[0]);
            return 2;
        }
    }
    bool ok = true;
#ifdef MP_RING_MPI
    // mpirun chose the ranks (-np); --ranks is not used.
    const int status = tp::mp::run_mpi(argc, argv, "mp_ring_mpi", [&](tp::mp::Comm& c) {
        if (c.size() < 2) throw std::invalid_argument("a ring needs at least 2 ranks (mpirun -np 2 or more)");
        if (c.rank() == 0) ok = ring(c, laps);
        else ring(c, laps);
    });
    return status != 0 ? status : ok ? 0 : 1;
#else
    if (ranks < 2) {
        std::fprintf(stderr, "%s: a ring needs at least 2 ranks\n", argv[0]);
        return 2;
    }
    tp::mp::TilesOptions options;
    options.ranks = ranks;
    try {
        tp::mp::run_tiles(options, [&](tp::mp::Comm& c) {
            if (c.rank() == 0) ok = ring(c, laps);
            else ring(c, laps);
        });
    } catch (const std::exception& e) {  // an mp::Error names the rank and the call
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return ok ? 0 : 1;
#endif
}
