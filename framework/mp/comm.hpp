// tp::mp::Comm: a message-passing API with the semantics of the MPI subset scientific codes
// use, written once and run on two backends: `tiles` (ranks are threads placed on the mesh,
// messages over the noc network; see tiles_world.hpp) and `mpi` (Open MPI processes; see
// mpi_backend.hpp).
//
// Semantics follow MPI's: a send matches the first posted receive whose source (or
// any_source) and tag (or any_tag) fit; messages between one pair with matching tags are
// received in the order sent; a receive whose buffer is shorter than the message is an error
// (truncation); status carries source, tag and count (elements of the receive's type).
// Sends to / receives from proc_null complete at once. Counts and ranks are checked before
// anything moves: a bad one throws mp::Error naming the rank and the call. Collectives must
// be called by every rank in the same order; the tiles backend detects a mismatch (another
// collective, root or count) and a peer that finished while others wait on it.
// Thread-safety: a Comm belongs to its rank's thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tp::mp {

inline constexpr int any_source = -1;
inline constexpr int any_tag = -1;
inline constexpr int proc_null = -2;
inline constexpr int tag_ub = 32767;  // the largest tag (MPI guarantees at least this)

// An error of one rank's call: "rank R: CALL: what".
class Error : public std::runtime_error {
public:
    Error(int rank, const std::string& call, const std::string& what)
        : std::runtime_error("rank " + std::to_string(rank) + ": " + call + ": " + what), rank_(rank), call_(call) {}
    int rank() const { return rank_; }
    const std::string& call() const { return call_; }

private:
    int rank_;
    std::string call_;
};

enum class Type { Byte, Int, Float, Double };
enum class Op { Sum, Max, Min };

template <typename T>
constexpr Type type_of() {
    if constexpr (std::is_same_v<T, int>) return Type::Int;
    else if constexpr (std::is_same_v<T, float>) return Type::Float;
    else if constexpr (std::is_same_v<T, double>) return Type::Double;
    else return Type::Byte;
}
size_t type_size(Type t);

struct Status {
    int source = proc_null;
    int tag = any_tag;
    int count = 0;       // elements of the receive's type
    size_t bytes = 0;    // the message's length
};

// A pending isend/irecv; complete it with wait/waitall (once).
struct Request {
    int slot = -1;      // -1: no operation (proc_null, or already waited)
    uint32_t elem = 1;  // element size of the receive, for Status::count
};

// What a backend implements: byte messages on a context (0: user point-to-point; the
// backend keeps collectives apart), and the collectives.
struct RawStatus {
    int source = proc_null;
    int tag = any_tag;
    size_t bytes = 0;
};

class Cart;

class Comm {
public:
    virtual ~Comm() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual const char* backend() const = 0;

    // Point to point. `count` elements of T at `buf`.
    template <typename T>
    void send(const T* buf, int count, int dest, int tag) {
        if (check_send("send", count, sizeof(T), dest, tag)) send_bytes(buf, size_t(count) * sizeof(T), dest, tag);
    }
    template <typename T>
    Status recv(T* buf, int count, int source, int tag) {
        if (!check_recv("recv", count, sizeof(T), source, tag)) return null_status();
        return typed<T>(recv_bytes(buf, size_t(count) * sizeof(T), source, tag));
    }
    template <typename T>
    Request isend(const T* buf, int count, int dest, int tag) {
        if (!check_send("isend", count, sizeof(T), dest, tag)) return Request{};
        return isend_bytes(buf, size_t(count) * sizeof(T), dest, tag);
    }
    template <typename T>
    Request irecv(T* buf, int count, int source, int tag) {
        if (!check_recv("irecv", count, sizeof(T), source, tag)) return Request{};
        Request r = irecv_bytes(buf, size_t(count) * sizeof(T), source, tag);
        r.elem = sizeof(T);
        return r;
    }
    Status wait(Request& r);
    std::vector<Status> waitall(std::span<Request> rs);

    template <typename T>
    Status sendrecv(const T* sbuf, int scount, int dest, int stag, T* rbuf, int rcount, int source, int rtag) {
        const bool s = check_send("sendrecv", scount, sizeof(T), dest, stag);
        const bool r = check_recv("sendrecv", rcount, sizeof(T), source, rtag);
        return typed<T>(sendrecv_bytes(sbuf, s ? size_t(scount) * sizeof(T) : 0, s ? dest : proc_null, stag, rbuf,
                                       r ? size_t(rcount) * sizeof(T) : 0, r ? source : proc_null, rtag));
    }
    // Sends `count` elements of `buf` to `dest` and receives into `buf` from `source`, through
    // an internal buffer of bounded size (the tiles backend's `replace_buffer`): the message
    // moves in segments, never all staged at once.
    template <typename T>
    Status sendrecv_replace(T* buf, int count, int dest, int stag, int source, int rtag) {
        const bool s = check_send("sendrecv_replace", count, sizeof(T), dest, stag);
        const bool r = check_recv("sendrecv_replace", count, sizeof(T), source, rtag);
        return typed<T>(replace_bytes(buf, size_t(count) * sizeof(T), s ? dest : proc_null, stag,
                                      r ? source : proc_null, rtag));
    }

    // Collectives (every rank calls them, in the same order).
    virtual void barrier() = 0;
    template <typename T>
    void bcast(T* buf, int count, int root) {
        check_collective("bcast", count, sizeof(T), root);
        bcast_bytes(buf, size_t(count) * sizeof(T), root);
    }
    // `recv` matters at `root` only (it may be nullptr elsewhere). T: int, float or double.
    template <typename T>
    void reduce(const T* send, T* recv, int count, Op op, int root) {
        static_assert(type_of<T>() != Type::Byte, "reduce works on int, float and double");
        check_collective("reduce", count, sizeof(T), root);
        reduce_raw(send, recv, count, type_of<T>(), op, root);
    }
    template <typename T>
    void allreduce(const T* send, T* recv, int count, Op op) {
        static_assert(type_of<T>() != Type::Byte, "allreduce works on int, float and double");
        check_collective("allreduce", count, sizeof(T), 0);
        allreduce_raw(send, recv, count, type_of<T>(), op);
    }

    // A Cartesian view of this communicator (ranks in row-major order, the last dimension
    // varying fastest, as MPI_Cart_create without reordering).
    Cart cart_create(std::vector<int> dims, std::vector<bool> periods);

protected:
    virtual void send_bytes(const void* buf, size_t bytes, int dest, int tag) = 0;
    virtual RawStatus recv_bytes(void* buf, size_t cap, int source, int tag) = 0;
    virtual Request isend_bytes(const void* buf, size_t bytes, int dest, int tag) = 0;
    virtual Request irecv_bytes(void* buf, size_t cap, int source, int tag) = 0;
    virtual RawStatus wait_raw(Request& r) = 0;
    virtual RawStatus sendrecv_bytes(const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap,
                                     int source, int rtag) = 0;
    virtual RawStatus replace_bytes(void* buf, size_t bytes, int dest, int stag, int source, int rtag) = 0;
    virtual void bcast_bytes(void* buf, size_t bytes, int root) = 0;
    virtual void reduce_raw(const void* send, void* recv, int count, Type t, Op op, int root) = 0;
    virtual void allreduce_raw(const void* send, void* recv, int count, Type t, Op op) = 0;

    [[noreturn]] void fail(const std::string& call, const std::string& what) const { throw Error(rank(), call, what); }

private:
    // False for proc_null (nothing to do); throws Error for a bad argument.
    bool check_send(const char* call, int count, size_t elem, int dest, int tag) const;
    bool check_recv(const char* call, int count, size_t elem, int source, int tag) const;
    void check_collective(const char* call, int count, size_t elem, int root) const;
    template <typename T>
    static Status typed(const RawStatus& s) {
        return Status{s.source, s.tag, static_cast<int>(s.bytes / sizeof(T)), s.bytes};
    }
    static Status null_status() { return Status{}; }
};

// combine `in` into `acc` (count elements of type t).
void combine(void* acc, const void* in, int count, Type t, Op op);

class Cart {
public:
    Cart(Comm& comm, std::vector<int> dims, std::vector<bool> periods);
    Comm& comm() const { return *comm_; }
    int ndims() const { return static_cast<int>(dims_.size()); }
    const std::vector<int>& dims() const { return dims_; }
    std::vector<int> coords(int rank) const;  // throws Error for a rank out of range
    // The rank at `coords`: a periodic dimension wraps, a coordinate outside a non-periodic
    // one throws Error.
    int rank(const std::vector<int>& coords) const;
    struct Shift {
        int source = proc_null;  // whom this rank receives from
        int dest = proc_null;    // whom it sends to
    };
    // The neighbours `disp` steps along `dim` (proc_null past a non-periodic edge).
    Shift shift(int dim, int disp) const;

private:
    Comm* comm_;
    std::vector<int> dims_;
    std::vector<bool> periods_;
};

}  // namespace tp::mp
