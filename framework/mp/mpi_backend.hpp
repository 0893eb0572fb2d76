// The `mpi` backend: the same Comm calls on a real MPI library (Open MPI), one rank per
// process of MPI_COMM_WORLD, so a program started with `mpirun -np N` runs across processes
// and hosts. Point-to-point moves bytes (MPI_BYTE), reductions use MPI's own types and ops,
// and the collectives are MPI's. MPI errors come back as mp::Error naming the rank and call
// (MPI_ERRORS_RETURN), e.g. a truncated receive.
#pragma once

#include <functional>

#include "framework/mp/comm.hpp"

namespace tp::mp {

// Initialises MPI, runs `fn` on this process's rank, finalises. An exception out of `fn` is
// printed as "PROGRAM: rank R: CALL: what" on stderr and aborts every rank (MPI_Abort), so
// that no rank waits forever on one that failed. Returns the process exit status.
int run_mpi(int& argc, char**& argv, const char* program, const std::function<void(Comm&)>& fn);

}  // namespace tp::mp
