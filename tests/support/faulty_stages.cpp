// Stages that misbehave on purpose, registered only in the test binaries (and in the test
// build of the CLI, `tilepipe_faulty`): they show what the runtime and the report do when a
// stage throws, loses a packet without counting it, or keeps mbufs it was given.
//
//   throw_after  processor: throws `message` on the burst that would pass packet `packets`
//                (before touching it), or from open() or close() when `in_open` or `in_close`
//                is set; with `not_std` it throws an int instead (no std::exception to name it);
//                `in_create` throws std::bad_alloc from its constructor (a table the host
//                cannot hold)
//   close_mark   processor: passes everything; close() appends the node's name and a newline
//                to `file`, so a test sees which stages were closed and in what order
//   vanish       processor: frees every `every`-th packet without counting a drop
//   hold         sink: counts every packet delivered but keeps its mbuf until destroyed
//   refuse       sink: drops every `every`-th packet as `refused` (a full TX ring, a failed
//                write), frees the rest as delivered
//   slow_setup   processor: passes everything, but takes `open_ms` to open and `close_ms` to
//                close (a table build, a flush): time the report must not count as traffic
#include <rte_mbuf.h>

#include <chrono>
#include <fstream>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "framework/stage/stage.hpp"

namespace tp {
namespace {

class ThrowAfter final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit ThrowAfter(const ParamValues& p)
        : Stage(kKind), after_(p.get_uint("packets")), message_(p.get_string("message")),
          in_open_(p.get_bool("in_open")), in_close_(p.get_bool("in_close")), not_std_(p.get_bool("not_std")) {
        if (p.get_bool("in_create")) throw std::bad_alloc();
    }
    void open(StageEnv&) override {
        if (in_open_) fail();
    }
    void process(Burst& b) override {
        if (!in_open_ && !in_close_ && seen_ + b.n > after_) fail();
        seen_ += b.n;
    }
    void close() override {
        if (in_close_) fail();
    }

private:
    [[noreturn]] void fail() const {
        if (not_std_) throw 42;
        throw std::runtime_error(message_);
    }
    uint64_t after_;
    std::string message_;
    bool in_open_, in_close_, not_std_;
    uint64_t seen_ = 0;
};

class CloseMark final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit CloseMark(const ParamValues& p) : Stage(kKind), file_(p.get_string("file")) {}
    void open(StageEnv& env) override { name_ = env.node_name; }
    void process(Burst&) override {}
    void close() override {
        std::ofstream out(file_, std::ios::app);
        out << name_ << '\n';
        if (!out.flush()) throw std::runtime_error("cannot append to " + file_);
    }

private:
    std::string file_, name_;
};

class Vanish final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit Vanish(const ParamValues& p) : Stage(kKind), every_(p.get_uint("every")) {}
    void process(Burst& b) override {
        uint16_t kept = 0;
        for (const PacketDesc& d : b) {
            if (++seen_ % every_ == 0) free_packet(d.mbuf);  // gone, and no drop says so
            else b.d[kept++] = d;
        }
        b.n = kept;
    }

private:
    uint64_t every_;
    uint64_t seen_ = 0;
};

class Hold final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    explicit Hold(const ParamValues&) : Stage(kKind) {}
    ~Hold() override {
        if (!held_.empty()) free_packets(held_.data(), static_cast<unsigned>(held_.size()));
    }
    void process(Burst& b) override {
        for (const PacketDesc& d : b) held_.push_back(d.mbuf);
        b.n = 0;
    }

private:
    std::vector<rte_mbuf*> held_;
};

class Refuse final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Sink;
    explicit Refuse(const ParamValues& p) : Stage(kKind), every_(p.get_uint("every")), refused_(declare_drop("refused")) {}
    void process(Burst& b) override {
        for (const PacketDesc& d : b) {
            if (++seen_ % every_ == 0) drop(d, refused_);
            else free_packet(d.mbuf);
        }
        b.n = 0;
    }

private:
    uint64_t every_;
    uint16_t refused_;
    uint64_t seen_ = 0;
};

class SlowSetup final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit SlowSetup(const ParamValues& p)
        : Stage(kKind), open_(p.get_uint("open_ms")), close_(p.get_uint("close_ms")) {}
    void open(StageEnv&) override { std::this_thread::sleep_for(open_); }
    void process(Burst&) override {}
    void close() override { std::this_thread::sleep_for(close_); }

private:
    std::chrono::milliseconds open_, close_;
};

TILEPIPE_STAGE(ThrowAfter, "throw_after", "test: throws after some packets, or when closed",
               param<uint64_t>("packets", 0, "packets passed before the burst it throws on"),
               param<std::string>("message", "deliberate failure", "the exception's text"),
               param<bool>("in_open", false, "throw from open() instead"),
               param<bool>("in_close", false, "throw from close() instead"),
               param<bool>("in_create", false, "throw std::bad_alloc from the constructor instead"),
               param<bool>("not_std", false, "throw an int rather than a std::exception"));
TILEPIPE_STAGE(CloseMark, "close_mark", "test: passes everything; close() appends the node's name to a file",
               param<std::string>("file", "", "the file close() appends to"));
TILEPIPE_STAGE(Vanish, "vanish", "test: frees every N-th packet without counting it",
               param<uint64_t>("every", 10, "one packet in this many vanishes"));
TILEPIPE_STAGE(Hold, "hold", "test: a sink that keeps the mbufs it is given until destroyed");
TILEPIPE_STAGE(Refuse, "refuse", "test: a sink that drops every N-th packet it is handed, counted",
               param<uint64_t>("every", 2, "one packet in this many is refused").at_least(1));
TILEPIPE_STAGE(SlowSetup, "slow_setup", "test: passes everything, slow to open and to close",
               param<uint64_t>("open_ms", 0, "milliseconds open() takes"),
               param<uint64_t>("close_ms", 0, "milliseconds close() takes"));

}  // namespace
}  // namespace tp
