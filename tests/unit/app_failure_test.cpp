// A stage that fails (tests/support/faulty_stages.cpp): the run ends, the report says where
// and why, the stages opened are closed, and every packet is still accounted for; an ordered
// collector holding packets gives them back, and its dispatcher held back by the credit is
// woken when numbers are released.
#include <gtest/gtest.h>

#include "framework/graph/pool_sizing.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/node_task.hpp"
#include "framework/runtime/sequence_credit.hpp"
#include "framework/runtime/sequence_field.hpp"
#include "framework/runtime/stop_request.hpp"

#include <algorithm>
#include <csignal>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/app_run.hpp"

namespace tp {
namespace {

using test::expect_accounted;
using test::run_yaml;

TEST(AppRunnerFailure, AStageThatThrowsStopsTheRunAndTheReportNamesTheNodeAndTheError) {
    // An endless source: only the failure can end this run.
    const RunReport r = run_yaml(
        "runtime: { fuse: never }\npipeline:\n  - stage: synth\n    count: 0\n  - parse\n"
        "  - { stage: throw_after, name: boom, packets: 5000, message: checksum table corrupt }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].node, "boom");
    EXPECT_EQ(r.failures[0].error, "checksum table corrupt");
    EXPECT_GE(r.failures[0].dropped, 1u) << "the burst it threw on is in flight";
    EXPECT_FALSE(stop_requested()) << "the stop the failure asked for ends with the run";
    for (const auto& s : r.stages)
        if (s.name == "boom") EXPECT_LE(s.out, 5000u);
    EXPECT_EQ(r.packets, r.delivered + r.drops);
    expect_accounted(r);
    const nlohmann::json j = to_json(r);
    ASSERT_EQ(j["failures"].size(), 1u);
    EXPECT_EQ(j["failures"][0]["node"], "boom");
    EXPECT_EQ(j["failures"][0]["error"], "checksum table corrupt");
    EXPECT_EQ(j["failures"][0]["dropped"], r.failures[0].dropped);
    EXPECT_NE(format_table(r).find("node 'boom' failed: checksum table corrupt"), std::string::npos) << format_table(r);
}

TEST(AppRunnerFailure, AFailureInOneStageOfAFusedChainIsTheNodesFailure) {
    const RunReport r = run_yaml(
        "runtime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - { stage: throw_after, packets: 100 }\n  - pass\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].error, "deliberate failure");
    expect_accounted(r);
}

TEST(AppRunnerFailure, AFailingWorkerOfAnOrderedFarmLetsTheOthersDrainInOrder) {
    // The collector waits for numbers the failed worker will never return; at end of stream
    // it releases what it holds, so nothing stays in its window.
    const RunReport r = run_yaml(
        "runtime: { fuse: never, threads: per_tile }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - farm:\n      name: rtc\n      workers: 3\n      dispatch: round_robin\n      collect: ordered\n"
        "      worker:\n        - { stage: throw_after, packets: 3000 }\n  - drop\n");
    ASSERT_GE(r.failures.size(), 1u);
    for (const auto& f : r.failures) EXPECT_EQ(f.node.rfind("rtc.", 0), 0u) << f.node;
    expect_accounted(r);
}

TEST(AppRunnerFailure, AFailingMapWorkerKeepsTheMapFlowingUntilTheStop) {
    const RunReport r = run_yaml(
        "runtime: { threads: per_tile }\npipeline:\n  - stage: synth\n    count: 0\n"
        "  - map:\n      workers: 4\n      multicast: tree\n      worker:\n        - { stage: throw_after, packets: 2000 }\n"
        "  - drop\n");
    ASSERT_GE(r.failures.size(), 1u);
    expect_accounted(r);
}

TEST(AppRunnerFailure, AStageFailingToCloseFailsTheRunAfterEverythingWasDelivered) {
    const RunReport r = run_yaml(
        "pipeline:\n  - stage: synth\n    count: 10000\n  - { stage: throw_after, name: late, in_close: true, "
        "message: cannot flush }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].error, "cannot flush");
    EXPECT_EQ(r.failures[0].dropped, 0u);
    EXPECT_EQ(r.delivered, 10000u);
    expect_accounted(r);
}

TEST(AppRunnerFailure, AnExceptionThatIsNotAStdExceptionIsTheNodesFailureNamingIt) {
    const RunReport r = run_yaml(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 0 }\n"
        "  - { stage: throw_after, name: boom, packets: 100, not_std: true }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].node, "boom");
    EXPECT_EQ(r.failures[0].error, "an exception that is not a std::exception");
    expect_accounted(r);
}

TEST(AppRunnerFailure, AStageClosingWithAnyExceptionAfterItsNodeFailedLetsTheOthersClose) {
    // A worker's chain is one node: its first stage fails, then the node closes its stages and
    // the second throws an int from close(); the node's failure stays the first error.
    const RunReport r = run_yaml(
        "pipeline:\n  - { stage: synth, count: 0 }\n  - farm:\n      name: fw\n      workers: 1\n      worker:\n"
        "        - { stage: throw_after, packets: 100, message: first }\n"
        "        - { stage: throw_after, in_close: true, not_std: true }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_EQ(r.failures[0].node, "fw.0");
    EXPECT_EQ(r.failures[0].error, "first");
    expect_accounted(r);
}

// A failed start: the stages opened before the one that failed are closed, newest first.
// close_mark stages append their node's name to a file when closed.
struct CloseMarks {
    std::string path = "/tmp/tp_runner_close_marks_" + std::to_string(getpid());
    CloseMarks() { std::remove(path.c_str()); }
    ~CloseMarks() { std::remove(path.c_str()); }
    std::string mark(const std::string& name) const {
        return "  - { stage: close_mark, name: " + name + ", file: '" + path + "' }\n";
    }
    std::string read() const {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

std::string start_error(const std::string& yaml) {
    try {
        AppConfig app = parse_app_config(yaml, "test.yaml");
        AppRunner runner(app);
    } catch (const LocatedError& e) {
        return e.what();
    }
    ADD_FAILURE() << "the runner started";
    return "";
}

TEST(AppRunnerFailure, AStageFailingToOpenIsNamedAndTheStagesOpenedBeforeItAreClosedNewestFirst) {
    const CloseMarks marks;
    const std::string error = start_error(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" + marks.mark("first") +
        marks.mark("second") + "  - { stage: throw_after, name: boom, in_open: true, message: no table }\n" +
        marks.mark("after") + "  - drop\n");
    EXPECT_EQ(error, "test.yaml:6:14: stage 'boom' (throw_after) failed to open: no table");
    EXPECT_EQ(marks.read(), "second\nfirst\n") << "'after' never opened, so it is not closed";
}

TEST(AppRunnerFailure, AStageTheHostCannotHoldIsRefusedNamingItsNodeAndWhere) {
    // An allocation in a stage's constructor that fails says only std::bad_alloc.
    try {
        AppConfig app = parse_app_config("pipeline:\n  - synth\n  - { stage: throw_after, name: big, in_create: true }\n  - drop\n",
                                         "test.yaml");
        AppRunner runner(app);
        ADD_FAILURE() << "the stage was built";
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()), "test.yaml:3:14: 'big' (throw_after) cannot be built: it needs more memory than the host "
                                         "gives (std::bad_alloc): see its parameters' sizes");
    }
}

TEST(AppRunnerFailure, AStageOfAWorkerChainFailingToOpenIsNamedWithItsNode) {
    const std::string error = start_error(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n"
        "  - farm:\n      name: fw\n      workers: 2\n      worker:\n        - pass\n"
        "        - { stage: throw_after, in_open: true, not_std: true }\n  - drop\n");
    EXPECT_NE(error.find("stage 'throw_after' of node 'fw.0' failed to open: an exception that is not a std::exception"),
              std::string::npos)
        << error;
}

TEST(AppRunnerFailure, AStageFailingToCloseAfterAFailedStartDoesNotKeepTheOthersOpen) {
    const CloseMarks marks;
    const std::string error = start_error(
        "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" + marks.mark("first") +
        "  - { stage: throw_after, name: stuck, in_close: true, message: cannot flush }\n" + marks.mark("second") +
        "  - { stage: throw_after, name: boom, in_open: true, message: no table }\n  - drop\n");
    EXPECT_NE(error.find("stage 'boom' (throw_after) failed to open: no table"), std::string::npos)
        << "the open failure is the one reported: " << error;
    EXPECT_EQ(marks.read(), "second\nfirst\n");
}

TEST(AppRunnerFailure, ARunnerThatNeverRanClosesItsStages) {
    const CloseMarks marks;
    {
        AppConfig app = parse_app_config("runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" +
                                             marks.mark("first") + marks.mark("second") + "  - drop\n",
                                         "test.yaml");
        AppRunner runner(app);
        EXPECT_EQ(marks.read(), "");
    }
    EXPECT_EQ(marks.read(), "second\nfirst\n");
}

TEST(AppRunnerFailure, StagesAreClosedOnceWhenTheRunRan) {
    const CloseMarks marks;
    const RunReport r = run_yaml("runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n" +
                                 marks.mark("first") + "  - drop\n");
    EXPECT_EQ(r.delivered, 100u);
    EXPECT_EQ(marks.read(), "first\n");
}

TEST(AppRunnerFailure, AMapWorkersStagesAreClosedAtTheEndOfTheStream) {
    const CloseMarks marks;
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n  - map:\n      name: m\n"
                                 "      workers: 3\n      worker:\n    " + marks.mark("mark") + "  - drop\n");
    EXPECT_EQ(r.delivered, 1000u);
    EXPECT_EQ(marks.read(), "mark\nmark\nmark\n") << "once per worker";
    expect_accounted(r);
}

TEST(AppRunnerFailure, AMapWorkerStageFailingToCloseFailsItsNode) {
    const RunReport r = run_yaml("pipeline:\n  - { stage: synth, count: 1000 }\n  - map:\n      name: m\n"
                                 "      workers: 2\n      worker:\n"
                                 "        - { stage: throw_after, in_close: true, message: cannot flush }\n  - drop\n");
    ASSERT_EQ(r.failures.size(), 2u);
    for (const auto& f : r.failures) EXPECT_EQ(f.error, "cannot flush") << f.node;
    EXPECT_EQ(r.delivered, 1000u);
    expect_accounted(r);
}

// An ordered collector driven by hand: a small pool, its input and output channels, and the
// spec of a NodeTask reading one and writing the other through a reorder window of 64.
struct HandCollector {
    static MbufPoolSpec pool_spec(const char* name) {
        MbufPoolSpec ps;
        ps.name = name;
        ps.mbufs = 1023;
        ps.cache = 0;
        return ps;
    }
    static ChannelSpec channel_spec() {
        ChannelSpec cs;
        cs.capacity = 64;
        return cs;
    }
    explicit HandCollector(const char* pool_name) : pool(pool_spec(pool_name)) {
        spec.inputs = {in.get()};
        spec.outputs = {out.get()};
        spec.reorder_window = 64;
    }
    MbufPool pool;
    std::unique_ptr<Channel<PacketDesc>> in = make_desc_channel(channel_spec()), out = make_desc_channel(channel_spec());
    NodeTaskSpec spec;
};

TEST(AppRunnerFailure, AnOrderedCollectorWhoseReorderCheckFailsGivesBackEveryPacketItHeld) {
    // Numbers 1, 2, 2: none is in order yet (0 is missing) and 2 arrives twice, which the
    // reorder window refuses. The collector's node fails; the packet it was inserting, the one
    // still in hand and the one the window stored all go back to the pool, counted.
    HandCollector h("reorder_failure");
    MbufPool& pool = h.pool;
    auto& in = h.in;
    auto& out = h.out;
    NodeTask collector(std::move(h.spec));
    const int offset = sequence_field_offset();
    rte_mbuf* m[3];
    ASSERT_TRUE(alloc_packets(pool.get(), m, 3));
    PacketDesc d[3];
    const uint32_t numbers[3] = {1, 2, 2};
    for (int i = 0; i < 3; ++i) {
        packet_sequence(m[i], offset) = numbers[i];
        d[i] = PacketDesc{m[i], 0, 64, 0, 0};
    }
    ASSERT_EQ(in->try_send_burst(d, 3), 3u);
    in->close();
    EXPECT_THROW(collector.poll(), std::logic_error);
    collector.record_failure("sequence number delivered twice");
    for (int polls = 0; !collector.finished() && polls < 100; ++polls) collector.poll_failed();
    EXPECT_TRUE(collector.finished());
    EXPECT_EQ(collector.failure_drops(), 3u);
    EXPECT_TRUE(out->closed()) << "downstream learns the end of the stream";
    EXPECT_EQ(pool.available(), pool.capacity());
}

// An ordered farm fed on demand: its emitter, held back by the collector's window, idles and
// its thread parks; the collector's next release must wake it (SequenceCredit). A sleeper on
// the emitter thread's doorbell says it is held, announces, re-checks the credit and parks for
// up to 5 s; the collector then receives the number it waits for. A lost wake-up sleeps out
// the 5 s.
TEST(SequenceCredit, ACollectorReleasingNumbersWakesTheDispatcherItHeldBack) {
    HandCollector h("credit_wake");
    MbufPool& pool = h.pool;
    auto& in = h.in;
    auto& out = h.out;
    Doorbell bell;
    SequenceCredit credit;
    credit.allowance = 64;
    credit.dispatcher_bell = &bell;
    h.spec.releasing = &credit;
    NodeTask collector(std::move(h.spec));

    rte_mbuf* m = nullptr;
    ASSERT_TRUE(alloc_packets(pool.get(), &m, 1));
    packet_sequence(m, sequence_field_offset()) = 0;
    const PacketDesc d{m, 0, 64, 0, 0};
    std::atomic<bool> parked{false};
    uint32_t seen = 0;
    std::chrono::steady_clock::time_point woke;
    std::thread dispatcher([&] {
        credit.held.store(true, std::memory_order_relaxed);  // as a held-back dispatcher does
        bell.prepare_park();
        parked.store(true, std::memory_order_release);
        // relaxed, as the dispatcher reads it: prepare_park's fence orders it after the announce.
        if (credit.released.load(std::memory_order_relaxed) == 0) bell.park(std::chrono::seconds(5));
        else bell.cancel_park();
        woke = std::chrono::steady_clock::now();
        seen = credit.released.load(std::memory_order_relaxed);
    });
    while (!parked.load(std::memory_order_acquire)) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // asleep, most likely

    EXPECT_EQ(in->try_send_burst(&d, 1), 1u);
    const auto released_at = std::chrono::steady_clock::now();
    EXPECT_TRUE(collector.poll());
    dispatcher.join();
    EXPECT_EQ(seen, 1u) << "the collector published the next number it waits for";
    EXPECT_EQ(bell.park_timeouts(), 0u);
    EXPECT_LT(std::chrono::duration<double>(woke - released_at).count(), 1.0)
        << "the dispatcher slept on after the release: wake-up lost";
    PacketDesc got;
    while (out->try_recv(got)) free_packet(got.mbuf);
    EXPECT_EQ(pool.available(), pool.capacity());
}

// Channels into one receiver that share one queue (Channel::receive_side), as a collector's
// links on the messaging network do: a receive pops the queue whichever link it goes through.
class SharedQueueView final : public Channel<PacketDesc> {
public:
    SharedQueueView(std::vector<PacketDesc>& queue, int& polls) : q_(queue), polls_(polls) {}
    bool try_send(const PacketDesc& d) override { q_.push_back(d); return true; }
    bool try_recv(PacketDesc& d) override { return try_recv_burst(&d, 1) == 1; }
    uint32_t try_send_burst(const PacketDesc* d, uint32_t n) override {
        q_.insert(q_.end(), d, d + n);
        return n;
    }
    uint32_t try_recv_burst(PacketDesc* d, uint32_t n) override {
        ++polls_;
        const uint32_t k = std::min<uint32_t>(n, static_cast<uint32_t>(q_.size()));
        std::copy(q_.begin(), q_.begin() + k, d);
        q_.erase(q_.begin(), q_.begin() + k);
        return k;
    }
    uint32_t capacity() const override { return 1024; }
    const char* transport() const override { return "shared_view"; }
    const void* receive_side() const override { return &q_; }

private:
    std::vector<PacketDesc>& q_;
    int& polls_;
};

TEST(NodeTaskInputs, LinksSharingOneQueueArePolledOnceNotOncePerSender) {
    // Fig. 12 of the TILEPro64 study: the asymmetric interface's receive cost does not grow
    // with the senders. An idle collector of 8 workers whose links share one queue looks at it
    // once per poll; one with 8 private links looks 8 times.
    std::vector<PacketDesc> queue;
    int polls = 0;
    std::vector<std::unique_ptr<Channel<PacketDesc>>> links;
    NodeTaskSpec spec;
    for (int w = 0; w < 8; ++w) {
        links.push_back(std::make_unique<SharedQueueView>(queue, polls));
        spec.inputs.push_back(links.back().get());
    }
    NodeTask collector(std::move(spec));
    EXPECT_FALSE(collector.poll());
    EXPECT_EQ(polls, 1);

    std::vector<std::vector<PacketDesc>> queues(8);
    int private_polls = 0;
    std::vector<std::unique_ptr<Channel<PacketDesc>>> private_links;
    NodeTaskSpec scan;
    for (auto& q : queues) {
        private_links.push_back(std::make_unique<SharedQueueView>(q, private_polls));
        scan.inputs.push_back(private_links.back().get());
    }
    NodeTask scanning(std::move(scan));
    EXPECT_FALSE(scanning.poll());
    EXPECT_EQ(private_polls, 8);
}

}  // namespace
}  // namespace tp
