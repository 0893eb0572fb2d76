#include "tilepipe/mp.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace tp::mp {

namespace {

MPI_Datatype mpi_type(Type t) {
    switch (t) {
    case Type::Int: return MPI_INT;
    case Type::Float: return MPI_FLOAT;
    case Type::Double: return MPI_DOUBLE;
    case Type::UInt64: return MPI_UINT64_T;
    case Type::DoubleInt: return MPI_DOUBLE_INT;
    case Type::Byte: break;
    }
    return MPI_BYTE;
}

MPI_Op mpi_op(Op op) {
    switch (op) {
    case Op::Sum: return MPI_SUM;
    case Op::Max: return MPI_MAX;
    case Op::Min: return MPI_MIN;
    case Op::MinLoc: return MPI_MINLOC;
    case Op::MaxLoc: return MPI_MAXLOC;
    }
    return MPI_SUM;
}

// DoubleInt is passed as MPI_DOUBLE_INT, whose C layout is struct { double; int; }.
static_assert(offsetof(DoubleInt, value) == 0 && offsetof(DoubleInt, index) == sizeof(double));

int src_of(int source) { return source == any_source ? MPI_ANY_SOURCE : source == proc_null ? MPI_PROC_NULL : source; }
int dst_of(int dest) { return dest == proc_null ? MPI_PROC_NULL : dest; }
int tag_of(int tag) { return tag == any_tag ? MPI_ANY_TAG : tag; }

// One communicator: MPI_COMM_WORLD, or one split() made (owned: freed with it).
class MpiComm final : public Comm {
public:
    explicit MpiComm(MPI_Comm comm = MPI_COMM_WORLD, bool owned = false) : comm_(comm), owned_(owned) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    }
    ~MpiComm() override {
        if (owned_) MPI_Comm_free(&comm_);
    }
    MpiComm(const MpiComm&) = delete;
    MpiComm& operator=(const MpiComm&) = delete;
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    const char* backend() const override { return "mpi"; }
    void barrier() override { check("barrier", MPI_Barrier(comm_)); }

protected:
    void send_bytes(const void* buf, size_t bytes, int dest, int tag) override {
        check("send", MPI_Send(buf, static_cast<int>(bytes), MPI_BYTE, dest, tag, comm_));
    }
    RawStatus recv_bytes(void* buf, size_t cap, int source, int tag) override {
        MPI_Status st;
        check("recv", MPI_Recv(buf, static_cast<int>(cap), MPI_BYTE, src_of(source), tag_of(tag), comm_, &st),
              &st);
        return raw(st);
    }
    Request isend_bytes(const void* buf, size_t bytes, int dest, int tag) override {
        const int slot = new_slot();
        check("isend", MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dest, tag, comm_, &requests_[slot]));
        return Request{slot};
    }
    Request irecv_bytes(void* buf, size_t cap, int source, int tag) override {
        const int slot = new_slot();
        check("irecv", MPI_Irecv(buf, static_cast<int>(cap), MPI_BYTE, src_of(source), tag_of(tag), comm_,
                                 &requests_[slot]));
        return Request{slot};
    }
    RawStatus wait_raw(Request& r) override {
        if (r.slot >= static_cast<int>(requests_.size()) || requests_[r.slot] == MPI_REQUEST_NULL)
            fail("wait", "the request is not pending");
        MPI_Status st;
        const int rc = MPI_Wait(&requests_[r.slot], &st);
        free_.push_back(r.slot);
        check("wait", rc, &st);
        return raw(st);
    }
    RawStatus sendrecv_bytes(const void* sbuf, size_t sbytes, int dest, int stag, void* rbuf, size_t rcap, int source,
                             int rtag) override {
        MPI_Status st;
        check("sendrecv",
              MPI_Sendrecv(sbuf, static_cast<int>(sbytes), MPI_BYTE, dst_of(dest), stag, rbuf, static_cast<int>(rcap),
                           MPI_BYTE, src_of(source), tag_of(rtag), comm_, &st),
              &st);
        return raw(st);
    }
    RawStatus replace_bytes(void* buf, size_t bytes, int dest, int stag, int source, int rtag) override {
        MPI_Status st;
        check("sendrecv_replace",
              MPI_Sendrecv_replace(buf, static_cast<int>(bytes), MPI_BYTE, dst_of(dest), stag, src_of(source),
                                   tag_of(rtag), comm_, &st),
              &st);
        return raw(st);
    }
    void bcast_bytes(void* buf, size_t bytes, int root) override {
        check("bcast", MPI_Bcast(buf, static_cast<int>(bytes), MPI_BYTE, root, comm_));
    }
    void reduce_raw(const void* send, void* recv, int count, Type t, Op op, int root) override {
        // MPI forbids aliased buffers (MPI_IN_PLACE is the way): copy the input first.
        std::vector<char> in;
        if (send == recv && rank_ == root) {
            in.assign(static_cast<const char*>(send), static_cast<const char*>(send) + count * type_size(t));
            send = in.data();
        }
        check("reduce", MPI_Reduce(send, recv, count, mpi_type(t), mpi_op(op), root, comm_));
    }
    void allreduce_raw(const void* send, void* recv, int count, Type t, Op op) override {
        if (send == recv) {
            check("allreduce", MPI_Allreduce(MPI_IN_PLACE, recv, count, mpi_type(t), mpi_op(op), comm_));
            return;
        }
        check("allreduce", MPI_Allreduce(send, recv, count, mpi_type(t), mpi_op(op), comm_));
    }

    bool test_raw(Request& r, RawStatus& out) override {
        if (r.slot >= static_cast<int>(requests_.size()) || requests_[r.slot] == MPI_REQUEST_NULL)
            fail("test", "the request is not pending");
        MPI_Status st;
        int flag = 0;
        const int rc = MPI_Test(&requests_[r.slot], &flag, &st);
        if (rc == MPI_SUCCESS && flag == 0) return false;
        free_.push_back(r.slot);  // complete (or failed, which frees it too)
        check("test", rc, &st);
        out = raw(st);
        return true;
    }
    std::unique_ptr<Comm> split_raw(int color, int key) override {
        MPI_Comm sub = MPI_COMM_NULL;
        check("split", MPI_Comm_split(comm_, color == undefined ? MPI_UNDEFINED : color, key, &sub));
        if (sub == MPI_COMM_NULL) return nullptr;
        return std::make_unique<MpiComm>(sub, true);
    }

private:
    int new_slot() {
        if (!free_.empty()) {
            const int s = free_.back();
            free_.pop_back();
            return s;
        }
        requests_.push_back(MPI_REQUEST_NULL);
        return static_cast<int>(requests_.size() - 1);
    }
    static RawStatus raw(const MPI_Status& st) {
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (st.MPI_SOURCE == MPI_PROC_NULL) return RawStatus{};
        return RawStatus{st.MPI_SOURCE, st.MPI_TAG, static_cast<size_t>(n)};
    }
    void check(const char* call, int rc, const MPI_Status* st = nullptr) const {
        if (rc == MPI_SUCCESS) return;
        int cls = 0;
        MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_IN_STATUS && st != nullptr) rc = st->MPI_ERROR;
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_TRUNCATE) fail(call, std::string("message truncated (") + std::string(text, len) + ")");
        fail(call, std::string(text, len));
    }

    MPI_Comm comm_;
    bool owned_;
    int rank_ = 0, size_ = 1;
    std::vector<MPI_Request> requests_;  // by request slot
    std::vector<int> free_;
};

}  // namespace

int run_mpi(int& argc, char**& argv, const char* program, const std::function<void(Comm&)>& fn) {
    MPI_Init(&argc, &argv);
    int status = 0;
    try {
        MpiComm comm;
        fn(comm);
    } catch (const Error& e) {
        std::fprintf(stderr, "%s: %s\n", program, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        status = 1;
    } catch (const std::exception& e) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        std::fprintf(stderr, "%s: rank %d: %s\n", program, rank, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        status = 1;
    }
    MPI_Finalize();
    return status;
}

}  // namespace tp::mp
