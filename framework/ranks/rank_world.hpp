// RankWorld: this process as one rank of an app that mpirun started on Open MPI.
//
// Construction calls MPI_Init_thread asking for MPI_THREAD_MULTIPLE (the tiles of the link
// ends call MPI each on its own thread) and refuses a library that provides less; destruction
// calls MPI_Finalize. The run's thread drives the rest, in order: agree_started() once every
// rank built its part (a rank that could not start names itself and its error, and no rank
// runs), tick() while the tiles run (a stop asked on one rank, by a signal or a failed tile,
// reaches every rank, so every source ends and the links drain), end_run() once the tiles
// joined, then gather() and agree() for the report and the exit status. Not thread-safe: the
// run's thread only.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace tp {

class RankWorld {
public:
    RankWorld();  // throws std::runtime_error (no MPI_THREAD_MULTIPLE, MPI_Init failed)
    ~RankWorld();
    RankWorld(const RankWorld&) = delete;
    RankWorld& operator=(const RankWorld&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    MPI_Comm links() const { return links_; }  // the links' own communicator

    // Every rank's start error ("" when it started), "rank N: error" each, on every rank.
    std::vector<std::string> agree_started(const std::string& error);
    void tick();
    void end_run();
    // Every rank's `text`, in rank order, on rank 0 (empty elsewhere).
    std::vector<std::string> gather(const std::string& text);
    // Rank 0's `value`, on every rank.
    int agree(int value);

private:
    void post_control();
    void send_control(int what);

    int rank_ = 0, size_ = 1;
    MPI_Comm links_ = MPI_COMM_NULL, control_ = MPI_COMM_NULL;
    int control_in_ = 0;
    MPI_Request control_req_ = MPI_REQUEST_NULL;
    std::vector<int> control_out_;  // one value per pending send (stable until end_run)
    std::vector<MPI_Request> control_sent_;
    bool stop_sent_ = false;
    int done_seen_ = 0;
};

}  // namespace tp
