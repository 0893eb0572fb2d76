#include "framework/ranks/rank_world.hpp"

#include <stdexcept>

#include "framework/runtime/stop_request.hpp"

namespace tp {

namespace {
constexpr int kControlTag = 1;
constexpr int kStop = 1;  // a rank was asked to stop: so is this one
constexpr int kDone = 2;  // a rank's tiles joined: it sends nothing more
}  // namespace

RankWorld::RankWorld() {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        throw std::runtime_error("MPI_Init_thread failed");
    if (provided < MPI_THREAD_MULTIPLE) {
        MPI_Finalize();
        throw std::runtime_error("the MPI library provides thread level " + std::to_string(provided) +
                                 ", below MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) +
                                 "), which links between ranks need (each link end is a tile of its own)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm_dup(MPI_COMM_WORLD, &links_);
    // An MPI call on a link that errs returns its error (MPI's default aborts every rank): the
    // link's end fails, naming the call and MPI's message, and the rest of the run drains.
    MPI_Comm_set_errhandler(links_, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &control_);
    control_out_.reserve(2 * static_cast<size_t>(size_));  // a stop and a done to each peer at most
    post_control();
}

RankWorld::~RankWorld() {
    if (control_req_ != MPI_REQUEST_NULL) {
        MPI_Cancel(&control_req_);
        MPI_Wait(&control_req_, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&control_);
    MPI_Comm_free(&links_);
    MPI_Finalize();
}

void RankWorld::post_control() {
    MPI_Irecv(&control_in_, 1, MPI_INT, MPI_ANY_SOURCE, kControlTag, control_, &control_req_);
}

void RankWorld::send_control(int what) {
    for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        control_out_.push_back(what);
        control_sent_.push_back(MPI_REQUEST_NULL);
        MPI_Isend(&control_out_.back(), 1, MPI_INT, r, kControlTag, control_, &control_sent_.back());
    }
}

std::vector<std::string> RankWorld::agree_started(const std::string& error) {
    const std::vector<std::string> all = gather(error);
    int failed = 0;
    for (const std::string& e : all) failed += e.empty() ? 0 : 1;
    // Rank 0 knows; it tells the others how many failed, and they learn nothing more (rank 0 prints).
    failed = agree(failed);
    std::vector<std::string> errors;
    for (size_t r = 0; r < all.size(); ++r)
        if (!all[r].empty()) errors.push_back("rank " + std::to_string(r) + ": " + all[r]);
    if (failed != 0 && errors.empty()) errors.push_back("another rank could not start");
    return errors;
}

void RankWorld::tick() {
    if (!stop_sent_ && stop_requested()) {
        stop_sent_ = true;
        send_control(kStop);
    }
    for (int flag = 1; flag != 0;) {
        MPI_Test(&control_req_, &flag, MPI_STATUS_IGNORE);
        if (flag == 0) break;
        if (control_in_ == kStop && !stop_requested()) {
            stop_sent_ = true;  // the others heard it from where it began
            request_stop();
        }
        if (control_in_ == kDone) ++done_seen_;
        post_control();
    }
}

void RankWorld::end_run() {
    tick();  // a stop asked at the very end still reaches the others
    send_control(kDone);
    // Every peer's last control message is its done: after it, nothing of theirs is left unmatched.
    while (done_seen_ < size_ - 1) {
        MPI_Wait(&control_req_, MPI_STATUS_IGNORE);
        if (control_in_ == kDone) ++done_seen_;
        post_control();
    }
    MPI_Waitall(static_cast<int>(control_sent_.size()), control_sent_.data(), MPI_STATUSES_IGNORE);
    control_sent_.clear();
    control_out_.clear();
}

std::vector<std::string> RankWorld::gather(const std::string& text) {
    const int len = static_cast<int>(text.size());
    std::vector<int> lens(static_cast<size_t>(size_));
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, control_);
    std::vector<int> at(static_cast<size_t>(size_), 0);
    int total = 0;
    for (int r = 0; r < size_; ++r) at[static_cast<size_t>(r)] = total, total += lens[static_cast<size_t>(r)];
    std::string all(static_cast<size_t>(rank_ == 0 ? total : 0), '\0');
    MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, 0, control_);
    std::vector<std::string> v;
    if (rank_ != 0) return v;
    for (int r = 0; r < size_; ++r) v.push_back(all.substr(static_cast<size_t>(at[static_cast<size_t>(r)]), static_cast<size_t>(lens[static_cast<size_t>(r)])));
    return v;
}

int RankWorld::agree(int value) {
    MPI_Bcast(&value, 1, MPI_INT, 0, control_);
    return value;
}

}  // namespace tp
