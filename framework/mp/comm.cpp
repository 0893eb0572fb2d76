#include "tilepipe/mp.hpp"

#include <algorithm>
#include <climits>

namespace tp::mp {

namespace {
// The longest message in bytes (a count MPI can express for MPI_BYTE).
constexpr size_t kMaxBytes = INT_MAX;

template <typename T>
void combine_as(T* acc, const T* in, int count, Op op) {
    switch (op) {
    case Op::Sum:
        for (int i = 0; i < count; ++i) acc[i] += in[i];
        break;
    case Op::Max:
        for (int i = 0; i < count; ++i) acc[i] = std::max(acc[i], in[i]);
        break;
    case Op::Min:
        for (int i = 0; i < count; ++i) acc[i] = std::min(acc[i], in[i]);
        break;
    case Op::MinLoc:
    case Op::MaxLoc:
        break;  // op_fits refuses them here
    }
}

// MPI_MINLOC/MPI_MAXLOC: the winning value with its index; equal values keep the lower index,
// so the result does not depend on the order a backend combines in.
void combine_loc(DoubleInt* acc, const DoubleInt* in, int count, Op op) {
    for (int i = 0; i < count; ++i) {
        const bool better = op == Op::MinLoc ? in[i].value < acc[i].value : in[i].value > acc[i].value;
        if (better || (in[i].value == acc[i].value && in[i].index < acc[i].index)) acc[i] = in[i];
    }
}

const char* op_name(Op op) {
    switch (op) {
    case Op::Sum: return "sum";
    case Op::Max: return "max";
    case Op::Min: return "min";
    case Op::MinLoc: return "minloc";
    case Op::MaxLoc: return "maxloc";
    }
    return "?";
}
// A rank's own thread alone (the mpi backend's ranks, and tiles ranks of one tile).
class SoloTeam final : public Team {
public:
    int size() const override { return 1; }
    void parallel_for(size_t n, const std::function<void(size_t, size_t, int)>& body) override { body(0, n, 0); }
};
}  // namespace

Team& Comm::team() {
    // Stateless: one for every rank and thread.
    static SoloTeam solo;
    return solo;
}

size_t type_size(Type t) {
    switch (t) {
    case Type::Int: return sizeof(int);
    case Type::Float: return sizeof(float);
    case Type::Double: return sizeof(double);
    case Type::UInt64: return sizeof(uint64_t);
    case Type::DoubleInt: return sizeof(DoubleInt);
    case Type::Byte: break;
    }
    return 1;
}

bool op_fits(Type t, Op op) {
    const bool loc = op == Op::MinLoc || op == Op::MaxLoc;
    return t != Type::Byte && loc == (t == Type::DoubleInt);
}

void combine(void* acc, const void* in, int count, Type t, Op op) {
    if (!op_fits(t, op)) return;
    switch (t) {
    case Type::Int: combine_as(static_cast<int*>(acc), static_cast<const int*>(in), count, op); break;
    case Type::Float: combine_as(static_cast<float*>(acc), static_cast<const float*>(in), count, op); break;
    case Type::Double: combine_as(static_cast<double*>(acc), static_cast<const double*>(in), count, op); break;
    case Type::UInt64: combine_as(static_cast<uint64_t*>(acc), static_cast<const uint64_t*>(in), count, op); break;
    case Type::DoubleInt:
        combine_loc(static_cast<DoubleInt*>(acc), static_cast<const DoubleInt*>(in), count, op);
        break;
    case Type::Byte: break;
    }
}

bool Comm::check_send(const char* call, int count, size_t elem, int dest, int tag) const {
    if (dest == proc_null) return false;
    if (dest < 0 || dest >= size())
        fail(call, "destination rank " + std::to_string(dest) + " is out of range (size " + std::to_string(size()) + ")");
    if (tag < 0 || tag > tag_ub)
        fail(call, "tag " + std::to_string(tag) + " is out of range (0.." + std::to_string(tag_ub) + ")");
    if (count < 0) fail(call, "count " + std::to_string(count) + " is negative");
    if (size_t(count) * elem > kMaxBytes)
        fail(call, "count " + std::to_string(count) + " x " + std::to_string(elem) + " bytes exceeds the largest message (" +
                       std::to_string(kMaxBytes) + " bytes)");
    return true;
}

bool Comm::check_recv(const char* call, int count, size_t elem, int source, int tag) const {
    if (source == proc_null) return false;
    if (source != any_source && (source < 0 || source >= size()))
        fail(call, "source rank " + std::to_string(source) + " is out of range (size " + std::to_string(size()) + ")");
    if (tag != any_tag && (tag < 0 || tag > tag_ub))
        fail(call, "tag " + std::to_string(tag) + " is out of range (0.." + std::to_string(tag_ub) + " or any_tag)");
    if (count < 0) fail(call, "count " + std::to_string(count) + " is negative");
    if (size_t(count) * elem > kMaxBytes)
        fail(call, "count " + std::to_string(count) + " x " + std::to_string(elem) + " bytes exceeds the largest message (" +
                       std::to_string(kMaxBytes) + " bytes)");
    return true;
}

void Comm::check_collective(const char* call, int count, size_t elem, int root) const {
    if (root < 0 || root >= size())
        fail(call, "root rank " + std::to_string(root) + " is out of range (size " + std::to_string(size()) + ")");
    if (count < 0) fail(call, "count " + std::to_string(count) + " is negative");
    if (size_t(count) * elem > kMaxBytes)
        fail(call, "count " + std::to_string(count) + " x " + std::to_string(elem) + " bytes exceeds the largest message (" +
                       std::to_string(kMaxBytes) + " bytes)");
}

void Comm::check_op(const char* call, Type t, Op op) const {
    if (op_fits(t, op)) return;
    if (t == Type::DoubleInt)
        fail(call, std::string("op ") + op_name(op) + " does not take DoubleInt elements (minloc or maxloc does)");
    fail(call, std::string("op ") + op_name(op) + " takes DoubleInt elements only");
}

Status Comm::wait(Request& r) {
    if (r.slot < 0) return Status{};
    const RawStatus s = wait_raw(r);
    r.slot = -1;
    return Status{s.source, s.tag, static_cast<int>(s.bytes / r.elem), s.bytes};
}

std::vector<Status> Comm::waitall(std::span<Request> rs) {
    std::vector<Status> out;
    out.reserve(rs.size());
    for (Request& r : rs) out.push_back(wait(r));
    return out;
}

bool Comm::test(Request& r, Status* status) {
    RawStatus s;
    if (r.slot >= 0) {
        if (!test_raw(r, s)) return false;
        r.slot = -1;
    }
    if (status != nullptr) *status = Status{s.source, s.tag, static_cast<int>(s.bytes / r.elem), s.bytes};
    return true;
}

std::unique_ptr<Comm> Comm::split(int color, int key) {
    if (color < 0 && color != undefined)
        fail("split", "color " + std::to_string(color) + " is negative (and not mp::undefined)");
    return split_raw(color, key);
}

Cart Comm::cart_create(std::vector<int> dims, std::vector<bool> periods) {
    return Cart(*this, std::move(dims), std::move(periods));
}

Cart::Cart(Comm& comm, std::vector<int> dims, std::vector<bool> periods)
    : comm_(&comm), dims_(std::move(dims)), periods_(std::move(periods)) {
    auto fail = [&](const std::string& what) { throw Error(comm.rank(), "cart_create", what); };
    if (dims_.empty()) fail("no dimensions");
    if (periods_.size() != dims_.size())
        fail(std::to_string(dims_.size()) + " dimensions but " + std::to_string(periods_.size()) + " periods");
    long long product = 1;
    std::string shape;
    for (int d : dims_) {
        if (d <= 0) fail("dimension " + std::to_string(d) + " is not positive");
        product *= d;
        shape += (shape.empty() ? "" : "x") + std::to_string(d);
        if (product > comm.size()) break;
    }
    if (product != comm.size())
        fail("dims " + shape + " hold " + std::to_string(product) + " ranks, the communicator has " +
             std::to_string(comm.size()));
}

std::vector<int> Cart::coords(int rank) const {
    if (rank < 0 || rank >= comm_->size())
        throw Error(comm_->rank(), "cart_coords",
                    "rank " + std::to_string(rank) + " is out of range (size " + std::to_string(comm_->size()) + ")");
    std::vector<int> c(dims_.size());
    for (size_t i = dims_.size(); i-- > 0;) {
        c[i] = rank % dims_[i];
        rank /= dims_[i];
    }
    return c;
}

int Cart::rank(const std::vector<int>& coords) const {
    if (coords.size() != dims_.size())
        throw Error(comm_->rank(), "cart_rank",
                    std::to_string(coords.size()) + " coordinates for " + std::to_string(dims_.size()) + " dimensions");
    int r = 0;
    for (size_t i = 0; i < dims_.size(); ++i) {
        int c = coords[i];
        if (periods_[i]) c = ((c % dims_[i]) + dims_[i]) % dims_[i];
        else if (c < 0 || c >= dims_[i])
            throw Error(comm_->rank(), "cart_rank",
                        "coordinate " + std::to_string(c) + " is outside non-periodic dimension " + std::to_string(i) +
                            " (0.." + std::to_string(dims_[i] - 1) + ")");
        r = r * dims_[i] + c;
    }
    return r;
}

Cart::Shift Cart::shift(int dim, int disp) const {
    if (dim < 0 || dim >= ndims())
        throw Error(comm_->rank(), "cart_shift",
                    "dimension " + std::to_string(dim) + " is out of range (0.." + std::to_string(ndims() - 1) + ")");
    const std::vector<int> me = coords(comm_->rank());
    auto at = [&](int step) {
        std::vector<int> c = me;
        c[dim] += step;
        if (!periods_[dim] && (c[dim] < 0 || c[dim] >= dims_[dim])) return proc_null;
        return rank(c);
    };
    return Shift{at(-disp), at(disp)};
}

}  // namespace tp::mp
