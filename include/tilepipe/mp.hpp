/// @file
/// Message passing: the MPI subset scientific codes use, written once against tp::mp::Comm and
/// run on two backends.
///
///  - `tiles` (run_tiles, in libtilepipe): every rank is a thread of this process, placed on a
///    tile of the mesh and pinned like an app's tiles; messages travel over tilepipe's on-chip
///    network (queues in shared memory).
///  - `mpi` (run_mpi, in libtilepipe-mpi, `pkg-config --cflags --libs tilepipe-mpi`): every
///    rank is a process of MPI_COMM_WORLD (Open MPI), started by `mpirun -np N`.
///
/// A program:
///
///     #include <tilepipe/mp.hpp>
///     int main() {
///         tp::mp::TilesOptions o;
///         o.ranks = 4;
///         tp::mp::run_tiles(o, [](tp::mp::Comm& c) {
///             int token = c.rank();
///             const int right = (c.rank() + 1) % c.size(), left = (c.rank() + c.size() - 1) % c.size();
///             c.sendrecv_replace(&token, 1, right, 0, left, 0);   // token == left
///         });
///     }
///
/// Semantics follow MPI's: a send matches the first posted receive whose source (or
/// any_source) and tag (or any_tag) fit; messages between one pair with matching tags are
/// received in the order sent; a receive whose buffer is shorter than the message is an error
/// (truncation); Status carries source, tag and count (elements of the receive's type). Sends
/// to and receives from proc_null complete at once. Counts, ranks and tags are checked before
/// anything moves: a bad one throws mp::Error naming the rank and the call. Collectives must
/// be called by every rank in the same order; the tiles backend detects a mismatch (another
/// collective, root or count) and a peer that finished while others wait on it, and throws
/// mp::Error instead of hanging.
///
/// Thread-safety: a Comm belongs to its rank: only the thread running that rank's function
/// calls it. Every call blocks its rank until the operation is complete (isend/irecv: until
/// the operation is started; wait completes it); a blocked tiles rank spins briefly, then
/// sleeps until a peer gives it something to do, so ranks may outnumber CPUs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tp::mp {

/// A receive's source that matches a message from any rank (MPI_ANY_SOURCE).
inline constexpr int any_source = -1;
/// A receive's tag that matches any tag (MPI_ANY_TAG).
inline constexpr int any_tag = -1;
/// A rank that is no rank: a send to it or a receive from it completes at once, moving
/// nothing (MPI_PROC_NULL; Cart::shift gives it past a non-periodic edge).
inline constexpr int proc_null = -2;
/// The largest tag (MPI guarantees at least this).
inline constexpr int tag_ub = 32767;
/// A split color that puts the calling rank in no new communicator (MPI_UNDEFINED):
/// Comm::split returns nullptr there.
inline constexpr int undefined = -32766;

/// An error of one rank's call: what() reads "rank R: CALL: what" (e.g. "rank 2: send:
/// destination rank 3 is out of range (size 3)").
class Error : public std::runtime_error {
public:
    /// An error of `call` on `rank`, saying `what`.
    Error(int rank, const std::string& call, const std::string& what)
        : std::runtime_error("rank " + std::to_string(rank) + ": " + call + ": " + what), rank_(rank), call_(call) {}
    /// The rank whose call failed.
    int rank() const { return rank_; }
    /// The call that failed ("send", "barrier", ...).
    const std::string& call() const { return call_; }

private:
    int rank_;
    std::string call_;
};

/// A value and the index it came from, the element of a MinLoc/MaxLoc reduction
/// (MPI_DOUBLE_INT: the same layout, so the mpi backend passes it as it is).
struct DoubleInt {
    double value = 0;  ///< compared
    int index = 0;     ///< carried along: the index of the winning value (ties: the lowest index)
};

/// An element type of a reduction (Byte: anything else, moved as bytes).
enum class Type { Byte, Int, Float, Double, UInt64, DoubleInt };
/// A reduction's operation. Sum, Max and Min take Int, Float, Double and UInt64 elements
/// (UInt64 sums wrap modulo 2^64, as unsigned arithmetic does); MinLoc and MaxLoc take
/// DoubleInt elements only (MPI_MINLOC/MPI_MAXLOC: the least/greatest value with its index,
/// the lowest index among equal values). Another pairing is an mp::Error.
enum class Op { Sum, Max, Min, MinLoc, MaxLoc };

/// The Type of T: Int, Float, Double, UInt64 (uint64_t), DoubleInt, or Byte for any other type.
template <typename T>
constexpr Type type_of() {
    if constexpr (std::is_same_v<T, int>) return Type::Int;
    else if constexpr (std::is_same_v<T, float>) return Type::Float;
    else if constexpr (std::is_same_v<T, double>) return Type::Double;
    else if constexpr (std::is_same_v<T, uint64_t>) return Type::UInt64;
    else if constexpr (std::is_same_v<T, DoubleInt>) return Type::DoubleInt;
    else return Type::Byte;
}
/// Bytes of one element of `t` (1 for Byte).
size_t type_size(Type t);
/// Whether a reduction may combine elements of `t` by `op` (see Op).
bool op_fits(Type t, Op op);
/// Combines `count` elements of type `t` of `in` into `acc` by `op` (a backend's reduction
/// step; a pairing op_fits refuses leaves `acc` as it is).
void combine(void* acc, const void* in, int count, Type t, Op op);

/// What a completed receive got.
struct Status {
    int source = proc_null;  ///< the sender (proc_null for a receive from proc_null)
    int tag = any_tag;       ///< the message's tag
    int count = 0;           ///< elements of the receive's type
    size_t bytes = 0;        ///< the message's length in bytes
};

/// A pending isend or irecv; complete it with Comm::wait or Comm::waitall, or with a
/// Comm::test that returns true, once. Every request started must be completed before the
/// rank's function returns (the tiles backend reports one that was not).
struct Request {
    int slot = -1;      ///< the backend's operation; -1: nothing to wait for (proc_null, or waited)
    uint32_t elem = 1;  ///< element size of the receive, for Status::count
};

/// What a backend reports of a receive, in bytes (Comm converts it to a Status).
struct RawStatus {
    int source = proc_null;  ///< the sender
    int tag = any_tag;       ///< the message's tag
    size_t bytes = 0;        ///< the message's length
};

class Cart;

/// The tiles a rank owns (TilesOptions::tiles_per_rank), for the hybrid model: the rank's
/// thread and a helper thread on each of its other tiles, pinned as the rank's thread is,
/// share its loops. Belongs to the rank's thread, which alone calls it.
class Team {
public:
    virtual ~Team() = default;
    /// The rank's tiles (1: its own thread alone, as every rank of the mpi backend).
    virtual int size() const = 0;
    /// Splits [0, n) into size() contiguous chunks, chunk t of about n / size() on tile t
    /// (tile 0: the calling thread), and runs body(begin, end, t) on each at once; returns
    /// when all are done. A tile always gets the same chunk for the same n, so data first
    /// touched in one parallel_for (its pages placed near that tile) is used by the same
    /// tile in the next. An exception out of a chunk comes out of parallel_for once the other
    /// chunks have finished; with several tiles as mp::Error of the call "parallel_for"
    /// saying what it was (and later loops on that team throw too: a tile failed).
    virtual void parallel_for(size_t n, const std::function<void(size_t begin, size_t end, int tile)>& body) = 0;
};

/// One rank's communicator: over every rank of the run (MPI_COMM_WORLD, what run_tiles and
/// run_mpi hand the rank's function), or over some of them (what split() returns). The calls
/// are templates over the element type T (any trivially copyable type; reductions: int,
/// float, double, uint64_t or DoubleInt); `count` is in elements. Each call throws
/// mp::Error for a bad argument, a truncated receive, or (tiles) a mismatched collective or a
/// peer that finished first.
/// Thread-safety: only the rank's own thread calls it.
class Comm {
public:
    virtual ~Comm() = default;
    /// This rank, 0..size()-1.
    virtual int rank() const = 0;
    /// The number of ranks.
    virtual int size() const = 0;
    /// "tiles" or "mpi".
    virtual const char* backend() const = 0;
    /// The tiles this rank owns and runs parallel loops on (see Team); a communicator from
    /// split() shares its rank's team.
    virtual Team& team();

    /// Sends `count` elements at `buf` to rank `dest` (or proc_null) with `tag` (0..tag_ub).
    /// Blocks until `buf` may be reused: a short message is copied out at once, a long one
    /// once the matching receive has taken it.
    template <typename T>
    void send(const T* buf, int count, int dest, int tag) {
        if (check_send("send", count, sizeof(T), dest, tag)) send_bytes(buf, size_t(count) * sizeof(T), dest, tag);
    }
    /// Receives a message of at most `count` elements into `buf` from `source` (a rank,
    /// any_source or proc_null) with `tag` (or any_tag). Blocks until it has arrived whole.
    /// Throws mp::Error when the message is longer than `count` elements (truncation).
    template <typename T>
    Status recv(T* buf, int count, int source, int tag) {
        if (!check_recv("recv", count, sizeof(T), source, tag)) return null_status();
        return typed<T>(recv_bytes(buf, size_t(count) * sizeof(T), source, tag));
    }
    /// Starts sending `count` elements at `buf` to `dest`; returns at once. `buf` must stay
    /// unchanged until wait() on the request returns.
    template <typename T>
    Request isend(const T* buf, int count, int dest, int tag) {
        if (!check_send("isend", count, sizeof(T), dest, tag)) return Request{};
        return isend_bytes(buf, size_t(count) * sizeof(T), dest, tag);
    }
    /// Starts receiving into `buf` (at most `count` elements) from `source` with `tag`;
    /// returns at once. `buf` holds the message once wait() on the request returns.
    template <typename T>
    Request irecv(T* buf, int count, int source, int tag) {
        if (!check_recv("irecv", count, sizeof(T), source, tag)) return Request{};
        Request r = irecv_bytes(buf, size_t(count) * sizeof(T), source, tag);
        r.elem = sizeof(T);
        return r;
    }
    /// Blocks until the operation of `r` is complete; returns its Status (a send's is empty)
    /// and leaves `r` empty. A request already waited (or empty) returns at once.
    Status wait(Request& r);
    /// wait() on each request, in order; their Statuses in the same order.
    std::vector<Status> waitall(std::span<Request> rs);
    /// MPI_Test: never blocks. Drives this rank's messages on, then: true when the operation
    /// of `r` is complete, which completes it as wait() would (its Status into `*status` when
    /// `status` is not nullptr; `r` left empty); false when it is not yet (call again, or
    /// wait()). An empty request gives true and an empty Status. A request that is not
    /// pending (completed already by another call of the backend) and, on the tiles backend,
    /// one whose peer has finished without its part throw mp::Error of the call "test".
    bool test(Request& r, Status* status = nullptr);

    /// Sends `scount` elements of `sbuf` to `dest` and receives at most `rcount` elements into
    /// `rbuf` from `source`, both at once (no deadlock when two ranks exchange). Blocks until
    /// both are complete; returns the receive's Status.
    template <typename T>
    Status sendrecv(const T* sbuf, int scount, int dest, int stag, T* rbuf, int rcount, int source, int rtag) {
        const bool s = check_send("sendrecv", scount, sizeof(T), dest, stag);
        const bool r = check_recv("sendrecv", rcount, sizeof(T), source, rtag);
        return typed<T>(sendrecv_bytes(sbuf, s ? size_t(scount) * sizeof(T) : 0, s ? dest : proc_null, stag, rbuf,
                                       r ? size_t(rcount) * sizeof(T) : 0, r ? source : proc_null, rtag));
    }
    /// Sends `count` elements of `buf` to `dest` and receives `count` elements from `source`
    /// into the same `buf`. The tiles backend moves the message in segments through a staging
    /// ring of TilesOptions::replace_buffer bytes, never the whole message at once. Blocks
    /// until both are complete; returns the receive's Status.
    template <typename T>
    Status sendrecv_replace(T* buf, int count, int dest, int stag, int source, int rtag) {
        const bool s = check_send("sendrecv_replace", count, sizeof(T), dest, stag);
        const bool r = check_recv("sendrecv_replace", count, sizeof(T), source, rtag);
        return typed<T>(replace_bytes(buf, size_t(count) * sizeof(T), s ? dest : proc_null, stag,
                                      r ? source : proc_null, rtag));
    }

    /// Blocks until every rank has called barrier(). Collective: every rank calls it.
    virtual void barrier() = 0;
    /// Copies `count` elements of `buf` at rank `root` into `buf` at every rank. Collective;
    /// blocks until this rank's part is done.
    template <typename T>
    void bcast(T* buf, int count, int root) {
        check_collective("bcast", count, sizeof(T), root);
        bcast_bytes(buf, size_t(count) * sizeof(T), root);
    }
    /// Combines `count` elements of every rank's `send` by `op` into `recv` at `root` (`recv`
    /// may be nullptr elsewhere). T: int, float, double, uint64_t (Sum, Max, Min) or DoubleInt
    /// (MinLoc, MaxLoc); another pairing throws mp::Error. Collective.
    template <typename T>
    void reduce(const T* send, T* recv, int count, Op op, int root) {
        static_assert(type_of<T>() != Type::Byte, "reduce works on int, float, double, uint64_t and DoubleInt");
        check_collective("reduce", count, sizeof(T), root);
        check_op("reduce", type_of<T>(), op);
        reduce_raw(send, recv, count, type_of<T>(), op, root);
    }
    /// reduce() whose result lands in `recv` at every rank. Collective.
    template <typename T>
    void allreduce(const T* send, T* recv, int count, Op op) {
        static_assert(type_of<T>() != Type::Byte, "allreduce works on int, float, double, uint64_t and DoubleInt");
        check_collective("allreduce", count, sizeof(T), 0);
        check_op("allreduce", type_of<T>(), op);
        allreduce_raw(send, recv, count, type_of<T>(), op);
    }

    /// MPI_Comm_split: a new communicator of the ranks that passed the same `color` (0 or
    /// more), ranked by `key` (ties: by rank in this one), or nullptr for a rank that passed
    /// mp::undefined. Collective over this communicator. The new one is a Comm like this one
    /// (point-to-point, collectives, test, split, cart_create), whose messages never match
    /// this one's; its ranks are its own (0..size()-1), and so are those its errors name.
    /// Belongs to the calling rank's thread, and must not outlive the rank's function (nor,
    /// on the tiles backend, be used after it). A negative color other than mp::undefined
    /// throws mp::Error; the tiles backend holds up to 32767 communicators over a run.
    std::unique_ptr<Comm> split(int color, int key);

    /// A Cartesian view of this communicator: `dims` (their product: size()), `periods` (one
    /// per dimension: does it wrap). Ranks in row-major order, the last dimension varying
    /// fastest, as MPI_Cart_create without reordering. Throws mp::Error for a shape that does
    /// not hold size() ranks. Not collective (nothing moves).
    Cart cart_create(std::vector<int> dims, std::vector<bool> periods);

protected:
    // What a backend implements, in bytes; the public calls above have checked the arguments
    // (a proc_null peer never reaches send_bytes/recv_bytes/isend/irecv). Each blocks as the
    // public call it serves does, on the rank's own thread.

    /// send(): `bytes` at `buf` to `dest` with `tag`.
    virtual void send_bytes(const void* buf, size_t bytes, int dest, int tag) = 0;
    /// recv(): at most `cap` bytes into `buf` from `source` (or any_source) with `tag` (or any_tag).
    virtual RawStatus recv_bytes(void* buf, size_t cap, int source, int tag) = 0;
    /// isend(): starts the send; its Request's slot names it to wait_raw().
    virtual Request isend_bytes(const void* buf, size_t bytes, int dest, int tag) = 0;
    /// irecv(): starts the receive; its Request's slot names it to wait_raw().
    virtual Request irecv_bytes(void* buf, size_t cap, int source, int tag) = 0;
    /// wait(): completes the operation of `r` (a send's RawStatus is empty).
    virtual RawStatus wait_raw(Request& r) = 0;
    /// sendrecv(): a proc_null `dest` or `source` (with 0 bytes) means that half does nothing.
    virtual RawStatus sendrecv_bytes(const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap,
                                     int source, int rtag) = 0;
    /// sendrecv_replace(): `bytes` of `buf` out to `dest`, as many in from `source` into `buf`.
    virtual RawStatus replace_bytes(void* buf, size_t bytes, int dest, int stag, int source, int rtag) = 0;
    /// bcast(): `bytes` of `buf` from `root` to every rank.
    virtual void bcast_bytes(void* buf, size_t bytes, int root) = 0;
    /// reduce(): `count` elements of type `t` combined by `op` into `recv` at `root`.
    virtual void reduce_raw(const void* send, void* recv, int count, Type t, Op op, int root) = 0;
    /// allreduce(): as reduce_raw, the result at every rank.
    virtual void allreduce_raw(const void* send, void* recv, int count, Type t, Op op) = 0;
    /// test(): completes the operation of `r` into `out` and returns true if it is complete.
    virtual bool test_raw(Request& r, RawStatus& out) = 0;
    /// split(): color (0 or more, or undefined) and key checked.
    virtual std::unique_ptr<Comm> split_raw(int color, int key) = 0;

    /// Throws mp::Error "rank R: call: what".
    [[noreturn]] void fail(const std::string& call, const std::string& what) const { throw Error(rank(), call, what); }

private:
    // False for proc_null (nothing to do); throws Error for a bad argument.
    bool check_send(const char* call, int count, size_t elem, int dest, int tag) const;
    bool check_recv(const char* call, int count, size_t elem, int source, int tag) const;
    void check_collective(const char* call, int count, size_t elem, int root) const;
    void check_op(const char* call, Type t, Op op) const;
    template <typename T>
    static Status typed(const RawStatus& s) {
        return Status{s.source, s.tag, static_cast<int>(s.bytes / sizeof(T)), s.bytes};
    }
    static Status null_status() { return Status{}; }
};

/// A Cartesian grid over a Comm (Comm::cart_create). Holds a reference to the Comm: use it
/// while the Comm lives, from the rank's own thread.
class Cart {
public:
    /// See Comm::cart_create.
    Cart(Comm& comm, std::vector<int> dims, std::vector<bool> periods);
    /// The communicator.
    Comm& comm() const { return *comm_; }
    /// The number of dimensions.
    int ndims() const { return static_cast<int>(dims_.size()); }
    /// The extent of each dimension.
    const std::vector<int>& dims() const { return dims_; }
    /// The coordinates of `rank`; throws mp::Error for a rank out of range.
    std::vector<int> coords(int rank) const;
    /// The rank at `coords`: a periodic dimension wraps, a coordinate outside a non-periodic
    /// one throws mp::Error.
    int rank(const std::vector<int>& coords) const;
    /// The neighbours of a shift (MPI_Cart_shift).
    struct Shift {
        int source = proc_null;  ///< whom this rank receives from
        int dest = proc_null;    ///< whom it sends to
    };
    /// The neighbours `disp` steps along `dim` (proc_null past a non-periodic edge).
    Shift shift(int dim, int disp) const;

private:
    Comm* comm_;
    std::vector<int> dims_;
    std::vector<bool> periods_;
};

/// How run_tiles places and connects its ranks.
struct TilesOptions {
    int ranks = 4;                     ///< threads, one per rank (1..4096)
    std::string topology;              ///< a mesh preset (epiphany16, tilepro64, ...); empty: the host's CPUs
    std::string placement = "linear";  ///< linear, snake or compact (rank r on the r-th tile placed)
    /// Bytes sendrecv_replace stages at most (at least 256). Below 1008 bytes (one segment of
    /// the network) it also bounds every message's pieces: an envelope carries at most this
    /// many bytes, and longer messages move in segments of this size (rounded down to 8).
    size_t replace_buffer = 65536;
    uint32_t credits = 32;             ///< segments in flight from one rank to another (at least 2)
    bool pin = true;                   ///< pin each rank's thread to its tile's CPU
    /// Tiles each rank owns (1..64): a run of this many consecutive tiles in the placement's
    /// order (with `linear` on a mesh, along a row), the rank's thread on the first and, for
    /// its Team, a helper thread on each other one (pinned to its tile's CPU when `pin`). The
    /// mesh holds ranks x tiles_per_rank tiles; messages leave from each rank's first tile.
    int tiles_per_rank = 1;
};

/// Runs `fn` once per rank, each on a thread of its own with that rank's Comm, and returns
/// when every rank's `fn` has returned. Blocks the caller meanwhile. Throws the first error a
/// rank raised (an mp::Error names the rank and the call; an exception of another type comes
/// back as mp::Error of the call "rank function"; ranks that then failed waiting on that rank
/// are not reported), mp::Error "finalize" for a request never waited, or
/// std::invalid_argument for options the topology cannot hold. Thread-safe: several calls may
/// run at once (each is a world of its own).
void run_tiles(const TilesOptions& options, const std::function<void(Comm&)>& fn);

/// The mpi backend (in libtilepipe-mpi: `pkg-config --libs tilepipe-mpi`): initialises MPI
/// with `argc`/`argv` (MPI may take its own arguments out of them), runs `fn` on this
/// process's rank of MPI_COMM_WORLD, finalises MPI, and returns the process's exit status (0).
/// An exception out of `fn` is printed as "PROGRAM: rank R: CALL: what" on stderr (PROGRAM is
/// `program`) and aborts every rank (MPI_Abort, status 1), so that no rank waits for ever on
/// one that failed. Call it once per process, from the main thread; start the program with
/// `mpirun -np N PROGRAM` (run alone it is one rank).
int run_mpi(int& argc, char**& argv, const char* program, const std::function<void(Comm&)>& fn);

}  // namespace tp::mp
