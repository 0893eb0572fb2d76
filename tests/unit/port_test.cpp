// The `port` source and `port_out` sink: what a user relies on when an app reads from or writes
// to a DPDK ethdev port. Virtual PMDs stand in for a NIC: net_ring (a loopback: what queue i
// transmits, queue i receives), net_null (frees what it transmits, generates what it receives)
// and net_pcap (reads or writes a capture file). Each test uses its own device names, since
// ports live for the whole test process.
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "framework/ports/ethdev_port.hpp"
#include "stages/pcap_source.hpp"
#include "stages/port_sink.hpp"
#include "stages/port_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Given = test::Given;

// Parameters as a config gives them: the node on line 1 of app.yaml, each given key on its own
// line after it, in order.
ParamValues params_of(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

MbufPool app_pool(uint32_t mbufs = 4095) {
    return test::named_pool("port_test_", {.mbufs = mbufs, .cache = 0});  // cache 0: available() exact from any thread
}

// A burst of `n` frames of 60 bytes, the first 4 bytes holding their sequence number.
Burst frames(MbufPool& pool, uint16_t n, uint32_t& seq) {
    Burst b;
    rte_mbuf* m[kBurstMax];
    EXPECT_TRUE(alloc_packets(pool.get(), m, n));
    for (uint16_t i = 0; i < n; ++i) {
        char* data = rte_pktmbuf_append(m[i], 60);
        std::memset(data, 0x5a, 60);
        std::memcpy(data, &seq, 4);
        ++seq;
        b.d[i] = PacketDesc{m[i], 0, 60, 0, 0};
    }
    b.n = n;
    return b;
}

struct Received {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    std::vector<uint32_t> seqs;
};

// Runs the source to Done, freeing every packet; gives up after `limit`.
Received drain(PortSource& src, std::chrono::seconds limit = std::chrono::seconds(30)) {
    Received r;
    const auto t0 = Clock::now();
    for (;;) {
        Burst b;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        if (Clock::now() - t0 > limit) {
            ADD_FAILURE() << "source still running after " << limit.count() << " s";
            break;
        }
        for (const PacketDesc& d : b) {
            ++r.packets;
            r.bytes += d.length;
            EXPECT_EQ(d.length, rte_pktmbuf_pkt_len(d.mbuf));
            uint32_t seq;
            std::memcpy(&seq, rte_pktmbuf_mtod(d.mbuf, const void*), 4);
            r.seqs.push_back(seq);
            rte_pktmbuf_free(d.mbuf);
        }
    }
    return r;
}

bool port_exists(const std::string& name) {
    uint16_t pid;
    return rte_eth_dev_get_port_by_name(name.c_str(), &pid) == 0;
}

class PortTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_port"};
    const std::string dir_ = scratch_.path();

    // Opens `stage` on `given` and expects open() to refuse; returns the error.
    template <typename S>
    LocatedError refusal(const std::string& stage, const Given& given) {
        S s(params_of(stage, given));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "node", 0};
        try {
            s.open(env);
        } catch (const LocatedError& e) {
            return e;
        }
        ADD_FAILURE() << "open() accepted " << given.front().second;
        s.close();
        return LocatedError(Location{}, "accepted");
    }

};

// ---- registration --------------------------------------------------------------------------

TEST(PortRegistration, PortIsASourceAndPortOutASinkWithDocumentedParameters) {
    const StageInfo* src = StageRegistry::instance().find("port");
    ASSERT_NE(src, nullptr);
    EXPECT_EQ(src->kind, StageKind::Source);
    for (const char* p : {"device", "file", "rx_queue", "queues", "rxd", "promisc", "packets", "idle_timeout"}) {
        ASSERT_NE(src->find_param(p), nullptr) << p;
        EXPECT_FALSE(src->find_param(p)->help.empty()) << p;
    }
    EXPECT_EQ(src->find_param("queues")->default_text, "1");
    EXPECT_EQ(src->find_param("rxd")->default_text, "1024");

    const StageInfo* sink = StageRegistry::instance().find("port_out");
    ASSERT_NE(sink, nullptr);
    EXPECT_EQ(sink->kind, StageKind::Sink);
    EXPECT_EQ(sink->find_param("device")->default_text, "net_null0");
    for (const char* p : {"devices", "tx_queue", "queues", "txd"}) ASSERT_NE(sink->find_param(p), nullptr) << p;
    EXPECT_EQ(sink->find_param("devices")->default_text, "");
}

// ---- sink ----------------------------------------------------------------------------------

TEST_F(PortTest, PortOutOnNetNullDeliversEveryPacketAndThePoolIsFullAfterwards) {
    MbufPool pool = app_pool();
    PortSink sink(params_of("port_out", {{"device", "net_null11"}}));
    StageEnv env{&pool, "out", 0};
    sink.open(env);
    EXPECT_TRUE(port_exists("net_null11"));
    uint32_t seq = 0;
    for (int i = 0; i < 200; ++i) {
        Burst b = frames(pool, kBurstMax, seq);
        sink.process(b);
        EXPECT_EQ(b.n, 0);
    }
    EXPECT_EQ(sink.stats().drops.get(), 0u);
    sink.close();
    EXPECT_EQ(pool.available(), pool.capacity());
    EXPECT_FALSE(port_exists("net_null11")) << "the device it created is removed at close";
}

TEST_F(PortTest, AFullTxQueueDropsTheRestAsTxFullInsteadOfSpinning) {
    // Nobody reads this loopback, so its ring (1023 packets) fills up.
    MbufPool pool = app_pool();
    PortSink sink(params_of("port_out", {{"device", "net_ring12"}}));
    StageEnv env{&pool, "out", 0};
    sink.open(env);
    ASSERT_EQ(sink.drop_reasons(), (std::vector<std::string>{"tx_full", "no_port"}));
    uint32_t seq = 0;
    const int bursts = 48;
    for (int i = 0; i < bursts; ++i) {
        Burst b = frames(pool, kBurstMax, seq);
        sink.process(b);
        EXPECT_EQ(b.n, 0);
    }
    const uint64_t drops = sink.stats().drops.get();
    EXPECT_GT(drops, 0u);
    EXPECT_LT(drops, uint64_t(bursts) * kBurstMax);
    EXPECT_EQ(sink.stats().reason[0].get(), drops);
    sink.close();
    EXPECT_EQ(pool.available(), pool.capacity()) << "packets left in the port are freed at close";
}

// ---- round trips ---------------------------------------------------------------------------

TEST_F(PortTest, WhatPortOutSendsOnARingLoopbackPortReceivesInOrder) {
    MbufPool pool = app_pool();
    const uint64_t before = ethdev_port_configurations();
    PortSink sink(params_of("port_out", {{"device", "net_ring13"}}));
    PortSource src(params_of("port", {{"device", "net_ring13"}, {"packets", "320"}}));
    StageEnv out_env{&pool, "out", 0};
    StageEnv in_env{&pool, "in", 3};
    sink.open(out_env);
    src.open(in_env);
    EXPECT_EQ(src.port_id(), sink.port_id());
    EXPECT_EQ(ethdev_port_configurations() - before, 1u);
    EXPECT_EQ(ethdev_port_users(src.port_id()), 2u);

    uint32_t seq = 0;
    for (int i = 0; i < 10; ++i) {
        Burst b = frames(pool, kBurstMax, seq);
        sink.process(b);
    }
    EXPECT_EQ(sink.stats().drops.get(), 0u);
    Burst first;
    ASSERT_EQ(src.produce(first), SourceStatus::Produced);
    for (const PacketDesc& d : first) {
        EXPECT_EQ(d.port, 3) << "stamped with the app's port id";
        EXPECT_EQ(d.type, 0);
        EXPECT_EQ(d.flow_hash, 0u) << "net_ring computes no RSS hash";
    }
    Received r;
    for (const PacketDesc& d : first) {
        uint32_t s;
        std::memcpy(&s, rte_pktmbuf_mtod(d.mbuf, const void*), 4);
        r.seqs.push_back(s);
        rte_pktmbuf_free(d.mbuf);
    }
    const Received rest = drain(src);
    r.seqs.insert(r.seqs.end(), rest.seqs.begin(), rest.seqs.end());
    ASSERT_EQ(r.seqs.size(), 320u) << "`packets` ends the stream after exactly that many";
    for (uint32_t i = 0; i < 320; ++i) EXPECT_EQ(r.seqs[i], i);
    EXPECT_EQ(rest.bytes, uint64_t(320 - first.n) * 60);

    src.close();
    EXPECT_EQ(ethdev_port_users(sink.port_id()), 1u) << "the sink still uses the port";
    sink.close();
    EXPECT_FALSE(port_exists("net_ring13"));
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PortTest, RxPcapDeviceReplaysAsManyPacketsAsThePcapStageAndEndsOnItsOwn) {
    const std::string file = test::pcaps_dir() + "/pcpp__example.pcap";
    MbufPool pool = app_pool(8191);

    PcapSource reference(params_of("pcap", {{"file", file}}));
    StageEnv ref_env{&pool, "ref", 0};
    reference.open(ref_env);
    const uint64_t expected = reference.template_packets();
    reference.close();
    ASSERT_GT(expected, 0u);

    PortSource src(params_of("port", {{"device", "net_pcap14,rx_pcap=" + file}}));
    EXPECT_DOUBLE_EQ(src.idle_timeout(), 0.0) << "the file's end, not a silence, ends it";
    StageEnv env{&pool, "in", 0};
    src.open(env);
    const Received r = drain(src);
    EXPECT_EQ(r.packets, expected);
    src.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

// A capture of another link type through a port carries the same Ethernet frames the pcap
// source replays from it (Linux cooked: every packet an IP packet, not `non_ip`; radiotap:
// 802.11 data frames as Ethernet, management frames skipped and counted), in order, whether
// the port is made from `file` or named as a net_pcap device.
TEST_F(PortTest, ACookedOrRadiotapCaptureThroughAPortBecomesThePcapSourcesEthernetFrames) {
    int next_dev = 40;
    for (const char* name : {"pcpp__sll.pcap", "zeek__radiotap.pcap", "zeek__linux_dlt_sll2.pcap"}) {
        SCOPED_TRACE(name);
        const std::string file = test::pcaps_dir() + "/" + name;
        MbufPool pool = app_pool(8191);
        auto collect = [&](Stage& src, uint64_t& skipped) {
            std::vector<std::vector<uint8_t>> frames;
            const auto t0 = Clock::now();
            for (;;) {
                Burst b;
                const SourceStatus st = src.produce(b);
                if (st == SourceStatus::Done || Clock::now() - t0 > std::chrono::seconds(30)) break;
                for (const PacketDesc& d : b) {
                    const auto* p = rte_pktmbuf_mtod(d.mbuf, const uint8_t*);
                    EXPECT_EQ(d.length, rte_pktmbuf_pkt_len(d.mbuf));
                    frames.emplace_back(p, p + rte_pktmbuf_data_len(d.mbuf));
                    rte_pktmbuf_free(d.mbuf);
                }
            }
            src.close();
            skipped = 0;
            for (size_t e = 0; e < src.events().size(); ++e)
                if (src.events()[e] == "capture.skipped_records") skipped = src.stats().event[e].get();
            return frames;
        };
        uint64_t ref_skipped = 0, port_skipped = 0, dev_skipped = 0;
        PcapSource reference(params_of("pcap", {{"file", file}}));
        StageEnv ref_env{&pool, "ref", 0};
        reference.open(ref_env);
        const auto want = collect(reference, ref_skipped);
        ASSERT_GT(want.size(), 0u);
        ASSERT_NE(want[0][12] << 8 | want[0][13], 0x0000) << "an EtherType";

        PortSource::check_params(params_of("port", {{"file", file}}));  // validate: accepted
        PortSource from_file(params_of("port", {{"file", file}}));
        StageEnv env{&pool, "in", 0};
        from_file.open(env);
        EXPECT_EQ(collect(from_file, port_skipped), want);
        EXPECT_EQ(port_skipped, ref_skipped);

        PortSource from_device(params_of("port", {{"device", "net_pcap" + std::to_string(next_dev++) + ",rx_pcap=" + file}}));
        from_device.open(env);
        EXPECT_EQ(collect(from_device, dev_skipped), want);
        EXPECT_EQ(dev_skipped, ref_skipped);
        EXPECT_EQ(pool.available(), pool.capacity());
    }
}

// A link type with no Ethernet form cannot go through a port: refused where it is named, by
// validate (check_params) as by open.
TEST_F(PortTest, ACaptureOfALinkTypeWithNoEthernetFormIsRefusedAtTheDevice) {
    const std::string file = dir_ + "/atm.pcap";
    {
        // A classic pcap header (microseconds, snaplen 65535) of link type ATM_RFC1483 (11).
        const uint32_t header[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 11};
        FILE* f = std::fopen(file.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        std::fwrite(header, sizeof header, 1, f);
        std::fclose(f);
    }
    try {
        PortSource::check_params(params_of("port", {{"device", "net_pcap49,rx_pcap=" + file}}));
        ADD_FAILURE() << "accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().str(), "app.yaml:2:5");
        EXPECT_NE(e.message().find("link type ATM_RFC1483 (11) cannot be carried by a port"), std::string::npos)
            << e.message();
    }
}

TEST_F(PortTest, PacketsLostForWantOfMbufsAreCountedBeforeTheSourceAndTheFileIsStillReadToItsEnd) {
    // While the app holds every mbuf, each poll of net_pcap reads a record it cannot store: a
    // packet lost before the source (rx_nombuf). A long stall must not end the replay early.
    const std::string file = test::pcaps_dir() + "/pcpp__example.pcap";
    MbufPool pool = app_pool(1023);
    PcapSource reference(params_of("pcap", {{"file", file}}));
    StageEnv ref_env{&pool, "ref", 0};
    reference.open(ref_env);
    const uint64_t records = reference.template_packets();
    reference.close();
    ASSERT_GT(records, 10u);

    PortSource src(params_of("port", {{"device", "net_pcap15,rx_pcap=" + file}}));
    StageEnv env{&pool, "in", 0};
    src.open(env);
    std::vector<rte_mbuf*> held(pool.available());
    ASSERT_TRUE(alloc_packets(pool.get(), held.data(), static_cast<unsigned>(held.size())));
    constexpr uint64_t kStarved = 5;
    for (uint64_t i = 0; i < kStarved; ++i) {
        Burst b;
        EXPECT_EQ(src.produce(b), SourceStatus::Idle);
        EXPECT_EQ(b.n, 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // longer than any idle cut-off
    free_packets(held.data(), static_cast<unsigned>(held.size()));
    const Received r = drain(src);
    src.close();
    EXPECT_EQ(r.packets, records - kStarved);
    EXPECT_EQ(src.stats().lost_before.get(), kStarved);
    ASSERT_EQ(src.events().at(0), "rx_nombuf");
    EXPECT_EQ(src.stats().event[0].get(), kStarved);
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PortTest, PortOutToATxPcapDeviceWritesAFileThatPortReadsBack) {
    const std::string file = dir_ + "/sent.pcap";
    MbufPool pool = app_pool();
    {
        PortSink sink(params_of("port_out", {{"device", "net_pcap15,tx_pcap=" + file}}));
        StageEnv env{&pool, "out", 0};
        sink.open(env);
        uint32_t seq = 0;
        for (int i = 0; i < 5; ++i) {
            Burst b = frames(pool, 20, seq);
            sink.process(b);
        }
        EXPECT_EQ(sink.stats().drops.get(), 0u);
        sink.close();
    }
    ASSERT_TRUE(fs::exists(file));
    PortSource src(params_of("port", {{"device", "net_pcap16,rx_pcap=" + file}}));
    StageEnv env{&pool, "in", 0};
    src.open(env);
    const Received r = drain(src);
    src.close();
    ASSERT_EQ(r.packets, 100u);
    EXPECT_EQ(r.bytes, 6000u);
    for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(r.seqs[i], i);
    EXPECT_EQ(pool.available(), pool.capacity());
}

// ---- sharing a port ------------------------------------------------------------------------

TEST_F(PortTest, TwoInstancesOnTwoRxQueuesOfOnePortConfigureItOnce) {
    MbufPool pool = app_pool();
    const uint64_t before = ethdev_port_configurations();
    PortSource q0(params_of("port", {{"device", "net_ring17"}, {"rx_queue", "0"}, {"queues", "2"}}));
    PortSource q1(params_of("port", {{"device", "net_ring17"}, {"rx_queue", "1"}, {"queues", "2"}}));
    StageEnv env0{&pool, "w0", 0};
    StageEnv env1{&pool, "w1", 0};
    q0.open(env0);
    q1.open(env1);
    EXPECT_EQ(ethdev_port_configurations() - before, 1u);
    ASSERT_EQ(q0.port_id(), q1.port_id());
    EXPECT_EQ(ethdev_port_users(q0.port_id()), 2u);
    rte_eth_dev_info info{};
    ASSERT_EQ(rte_eth_dev_info_get(q0.port_id(), &info), 0);
    EXPECT_EQ(info.nb_rx_queues, 2);

    // Each reads its own queue: a loopback port receives on queue i what queue i sent.
    PortSink tx1(params_of("port_out", {{"device", "net_ring17"}, {"tx_queue", "1"}, {"queues", "2"}}));
    tx1.open(env1);
    uint32_t seq = 0;
    Burst b = frames(pool, 8, seq);
    tx1.process(b);
    Burst got0;
    EXPECT_EQ(q0.produce(got0), SourceStatus::Idle);
    Burst got1;
    ASSERT_EQ(q1.produce(got1), SourceStatus::Produced);
    EXPECT_EQ(got1.n, 8);
    for (const PacketDesc& d : got1) rte_pktmbuf_free(d.mbuf);

    tx1.close();
    q0.close();
    EXPECT_TRUE(port_exists("net_ring17")) << "queue 1's reader still uses the port";
    q1.close();
    EXPECT_FALSE(port_exists("net_ring17"));
    EXPECT_EQ(pool.available(), pool.capacity());
}

// A later source's RX queue moves onto that source's pool; when DPDK refuses the pool, the error
// names the call, the port and the queue, and the queue goes back on its previous pool with the
// port started again, so the port's earlier users keep receiving.
TEST_F(PortTest, AQueueThatCannotMoveToItsSourcesPoolStaysAndThePortRunsOn) {
    MbufPool pool = app_pool();
    // Mbufs smaller than their headroom: no RX queue takes the pool.
    rte_mempool* tiny = rte_pktmbuf_pool_create("port_test_tiny", 63, 0, 0, 64, SOCKET_ID_ANY);
    ASSERT_NE(tiny, nullptr);
    PortRequest r;
    r.device = "net_null27";
    r.queues = 2;
    r.pool = pool.get();
    r.source = true;
    const uint16_t pid = ethdev_port_acquire(r);
    PortRequest second = r;
    second.queue = 1;
    second.pool = tiny;
    try {
        ethdev_port_acquire(second);
        ADD_FAILURE() << "a pool no RX queue takes was accepted";
        ethdev_port_release(pid);
    } catch (const std::runtime_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("port " + std::to_string(pid) + " RX queue 1 to its source's pool: rte_eth_rx_queue_setup: "),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("the port runs on"), std::string::npos) << msg;
    }
    EXPECT_EQ(ethdev_port_users(pid), 1u);
    for (uint16_t q = 0; q < 2; ++q) {
        rte_mbuf* m[8];
        const uint16_t n = rte_eth_rx_burst(pid, q, m, 8);
        EXPECT_EQ(n, 8) << "queue " << q << ": the port was started again";
        for (uint16_t i = 0; i < n; ++i) EXPECT_EQ(m[i]->pool, pool.get()) << "queue " << q << " keeps its pool";
        rte_pktmbuf_free_bulk(m, n);
    }
    ethdev_port_release(pid);
    EXPECT_EQ(pool.available(), pool.capacity());
    rte_mempool_free(tiny);
}

TEST_F(PortTest, AQueueTheSharedPortDoesNotHaveIsRefusedAtTheDevice) {
    MbufPool pool = app_pool();
    PortSource first(params_of("port", {{"device", "net_ring18"}}));
    StageEnv env{&pool, "w0", 0};
    first.open(env);
    const LocatedError e =
        refusal<PortSource>("port", {{"device", "net_ring18"}, {"rx_queue", "1"}, {"queues", "2"}});
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(e.message().find("queue 1 does not exist"), std::string::npos) << e.what();
    first.close();
}

// ---- source ends ---------------------------------------------------------------------------

TEST_F(PortTest, IdleTimeoutEndsASilentStream) {
    MbufPool pool = app_pool();
    PortSource src(params_of("port", {{"device", "net_ring19"}, {"idle_timeout", "0.05"}}));
    StageEnv env{&pool, "in", 0};
    src.open(env);
    const auto t0 = Clock::now();
    const Received r = drain(src, std::chrono::seconds(5));
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_EQ(r.packets, 0u);
    EXPECT_GE(s, 0.045);
    EXPECT_LT(s, 2.0);
    src.close();
}

TEST_F(PortTest, PacketsLimitEndsAnEndlessGenerator) {
    MbufPool pool = app_pool();
    PortSource src(params_of("port", {{"device", "net_null20"}, {"packets", "1000"}}));
    StageEnv env{&pool, "in", 0};
    src.open(env);
    uint64_t n = 0;
    for (Burst b; src.produce(b) != SourceStatus::Done; b.n = 0) {
        n += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    EXPECT_EQ(n, 1000u);
    src.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

// ---- errors --------------------------------------------------------------------------------

TEST_F(PortTest, AnUnknownDeviceIsRefusedAtTheDeviceParameter) {
    const LocatedError e = refusal<PortSource>("port", {{"device", "no_such_port"}});
    EXPECT_EQ(e.where().file, "app.yaml");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(e.message().find("no port named 'no_such_port'"), std::string::npos) << e.what();

    const LocatedError out = refusal<PortSink>("port_out", {{"device", "no_such_port"}});
    EXPECT_EQ(out.where().line, 2);
    EXPECT_NE(out.message().find("no port named"), std::string::npos) << out.what();
}

TEST_F(PortTest, AVirtualDeviceThatCannotBeCreatedIsRefusedWithDpdksReason) {
    const LocatedError e =
        refusal<PortSource>("port", {{"device", "net_pcap21,rx_pcap=" + dir_ + "/missing.pcap"}});
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(e.message().find("cannot create virtual device"), std::string::npos) << e.what();
    EXPECT_FALSE(port_exists("net_pcap21"));

    const LocatedError driver = refusal<PortSink>("port_out", {{"device", "net_nosuchdriver0"}});
    EXPECT_NE(driver.message().find("cannot create virtual device"), std::string::npos) << driver.what();
}

TEST_F(PortTest, AWaitedLinkThatNeverComesUpIsRefusedAtOpenAndTheDeviceRemoved) {
    // A memif server nobody connects to: its link stays down.
    const LocatedError e = refusal<PortSink>(
        "port_out", {{"device", "net_memif31,role=server,socket=" + dir_ + "/lonely.sock"}, {"wait_link", "0.2"}});
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(e.message().find("link did not come up within 0.2 s"), std::string::npos) << e.what();
    EXPECT_FALSE(port_exists("net_memif31"));
    // A memif client with no server: its start is tried until the wait runs out.
    const LocatedError c = refusal<PortSource>(
        "port", {{"device", "net_memif32,role=client,socket=" + dir_ + "/nobody.sock"}, {"wait_link", "0.2"}});
    EXPECT_NE(c.message().find("cannot start the port"), std::string::npos) << c.what();
    EXPECT_NE(c.message().find("tried for 0.2 s"), std::string::npos) << c.what();
    EXPECT_FALSE(port_exists("net_memif32"));
}

TEST_F(PortTest, TooManyQueuesForTheDeviceIsRefusedAtOpen) {
    const LocatedError e = refusal<PortSource>(
        "port", {{"device", "net_pcap22,rx_pcap=" + test::pcaps_dir() + "/pcpp__example.pcap"},
                 {"queues", "4"}});
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(e.message().find("4 queues asked"), std::string::npos) << e.what();
    EXPECT_FALSE(port_exists("net_pcap22")) << "a device created for a failed open is removed";
}

TEST(PortParameters, AFileBecomesANetPcapDeviceWithOneReplayPerQueue) {
    const std::string one = PortSource::device_of(params_of("port", {{"file", "caps/a.pcap"}}));
    EXPECT_EQ(one.rfind("net_pcap", 0), 0u) << one;
    EXPECT_NE(one.find(",rx_pcap=caps/a.pcap"), std::string::npos) << one;
    const std::string three = PortSource::device_of(params_of("port", {{"file", "caps/a.pcap"}, {"queues", "3"}}));
    size_t n = 0;
    for (size_t at = three.find("rx_pcap="); at != std::string::npos; at = three.find("rx_pcap=", at + 1)) ++n;
    EXPECT_EQ(n, 3u) << three;
    auto refused = [](const Given& g) -> std::string {
        try {
            PortSource::device_of(params_of("port", g));
        } catch (const LocatedError& e) {
            return e.where().str() + " " + e.message();
        }
        return "accepted";
    };
    EXPECT_NE(refused({}).find("needs 'device'"), std::string::npos) << refused({});
    EXPECT_NE(refused({{"device", "net_null0"}, {"file", "a.pcap"}}).find("app.yaml:3:5 'device' and 'file' both"),
              std::string::npos);
}

// ---- sending by port -----------------------------------------------------------------------

// Sequence numbers of every frame waiting on RX queue 0 of `device` (a net_ring loopback).
std::vector<uint32_t> ring_contents(const std::string& device) {
    uint16_t pid;
    EXPECT_EQ(rte_eth_dev_get_port_by_name(device.c_str(), &pid), 0) << device;
    std::vector<uint32_t> seqs;
    rte_mbuf* m[kBurstMax];
    for (uint16_t n; (n = rte_eth_rx_burst(pid, 0, m, kBurstMax)) != 0;)
        for (uint16_t i = 0; i < n; ++i) {
            uint32_t s;
            std::memcpy(&s, rte_pktmbuf_mtod(m[i], const void*), 4);
            seqs.push_back(s);
            rte_pktmbuf_free(m[i]);
        }
    return seqs;
}

TEST_F(PortTest, WithDevicesEachPacketGoesToItsPortsDeviceInOrderAndAPortWithoutOneIsANoPortDrop) {
    // Ports 0, 1, 2 cycle through every burst; port 2 has no device.
    MbufPool pool = app_pool();
    PortSink sink(params_of("port_out", {{"devices", "net_ring20, net_ring21"}}));
    StageEnv env{&pool, "out", 0};
    sink.open(env);
    ASSERT_NE(sink.port_id(0), sink.port_id(1));
    std::vector<uint32_t> want[3];
    uint32_t seq = 0;
    for (int i = 0; i < 10; ++i) {
        const uint32_t first = seq;
        Burst b = frames(pool, kBurstMax, seq);
        for (uint16_t k = 0; k < b.n; ++k) {
            b.d[k].port = static_cast<uint8_t>((first + k) % 3);
            want[b.d[k].port].push_back(first + k);
        }
        sink.process(b);
        EXPECT_EQ(b.n, 0);
    }
    // What each device received, read back from its loopback: exactly its port's packets, in order.
    EXPECT_EQ(ring_contents("net_ring20"), want[0]);
    EXPECT_EQ(ring_contents("net_ring21"), want[1]);
    EXPECT_EQ(sink.stats().drops.get(), want[2].size());
    EXPECT_EQ(sink.stats().reason[1].get(), want[2].size()) << "no_port";
    EXPECT_EQ(sink.stats().reason[0].get(), 0u) << "tx_full";
    const std::vector<PortTx> tx = sink.tx_by_port();
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].port, 0);
    EXPECT_EQ(tx[0].to, "net_ring20");
    EXPECT_EQ(tx[0].packets, want[0].size());
    EXPECT_EQ(tx[1].to, "net_ring21");
    EXPECT_EQ(tx[1].packets, want[1].size());
    sink.close();
    EXPECT_FALSE(port_exists("net_ring20"));
    EXPECT_FALSE(port_exists("net_ring21"));
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PortTest, WithDevicesTheDevicesOwnCountersAgreeWithThePerPortCounts) {
    // net_null frees what it sends and counts it in its own statistics: an oracle the stage
    // does not write.
    MbufPool pool = app_pool();
    PortSink sink(params_of("port_out", {{"devices", "net_null22,size=64, net_null23"}}));
    StageEnv env{&pool, "out", 0};
    sink.open(env);
    uint64_t want[2] = {0, 0};
    uint32_t seq = 0;
    for (int i = 0; i < 50; ++i) {
        Burst b = frames(pool, kBurstMax, seq);
        for (uint16_t k = 0; k < b.n; ++k) b.d[k].port = (seq + k * 7) % 5 < 2 ? 0 : 1;
        for (const PacketDesc& d : b) ++want[d.port];
        sink.process(b);
    }
    const std::vector<PortTx> tx = sink.tx_by_port();
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].to, "net_null22,size=64") << "a vdev argument stays with its device";
    for (size_t p = 0; p < 2; ++p) {
        rte_eth_stats st{};
        ASSERT_EQ(rte_eth_stats_get(sink.port_id(p), &st), 0);
        EXPECT_EQ(st.opackets, want[p]) << "port " << p;
        EXPECT_EQ(tx[p].packets, want[p]) << "port " << p;
    }
    EXPECT_EQ(sink.stats().drops.get(), 0u);
    sink.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PortTest, WithoutDevicesEveryPortGoesToTheOneDeviceAndNoPerPortCountsAreReported) {
    MbufPool pool = app_pool();
    PortSink sink(params_of("port_out", {{"device", "net_null24"}}));
    StageEnv env{&pool, "out", 0};
    sink.open(env);
    uint32_t seq = 0;
    Burst b = frames(pool, kBurstMax, seq);
    for (uint16_t k = 0; k < b.n; ++k) b.d[k].port = static_cast<uint8_t>(k * 9);
    sink.process(b);
    rte_eth_stats st{};
    ASSERT_EQ(rte_eth_stats_get(sink.port_id(), &st), 0);
    EXPECT_EQ(st.opackets, kBurstMax);
    EXPECT_EQ(sink.stats().drops.get(), 0u);
    EXPECT_TRUE(sink.tx_by_port().empty());
    sink.close();
}

TEST_F(PortTest, FarmWorkersSendOnTheirOwnTxQueueOfEveryDevice) {
    MbufPool pool = app_pool();
    PortSink w0(params_of("port_out", {{"devices", "net_null25, net_null26"}, {"tx_queue", "0"}, {"queues", "2"}}));
    PortSink w1(params_of("port_out", {{"devices", "net_null25, net_null26"}, {"tx_queue", "1"}, {"queues", "2"}}));
    StageEnv env{&pool, "out", 0};
    w0.open(env);
    w1.open(env);
    for (size_t p = 0; p < 2; ++p) {
        EXPECT_EQ(w0.port_id(p), w1.port_id(p));
        EXPECT_EQ(ethdev_port_users(w0.port_id(p)), 2u);
        rte_eth_dev_info info{};
        ASSERT_EQ(rte_eth_dev_info_get(w0.port_id(p), &info), 0);
        EXPECT_EQ(info.nb_tx_queues, 2);
    }
    uint32_t seq = 0;
    for (PortSink* w : {&w0, &w1}) {
        Burst b = frames(pool, kBurstMax, seq);
        for (uint16_t k = 0; k < b.n; ++k) b.d[k].port = k & 1;
        w->process(b);
        EXPECT_EQ(w->stats().drops.get(), 0u);
        EXPECT_EQ(w->tx_by_port()[0].packets, kBurstMax / 2);
        EXPECT_EQ(w->tx_by_port()[1].packets, kBurstMax / 2);
    }
    w0.close();
    w1.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST(PortParameters, DevicesListsOneDevicePerPortAndKeepsVdevArgumentsWithTheirDevice) {
    const auto list = PortSink::device_list(
        params_of("port_out", {{"devices", "net_pcap0,tx_pcap=a.pcap, 0000:3b:00.1 ,net_ring0,nodeaction=r0:0:CREATE"}}));
    EXPECT_EQ(list, (std::vector<std::string>{"net_pcap0,tx_pcap=a.pcap", "0000:3b:00.1", "net_ring0,nodeaction=r0:0:CREATE"}));
    EXPECT_EQ(PortSink::pci_devices(params_of("port_out", {{"devices", "net_null0, 0000:3b:00.1,x=1"}})),
              std::vector<std::string>{"0000:3b:00.1"});
    EXPECT_TRUE(PortSink::device_list(params_of("port_out", {})).empty());
}

TEST(PortParameters, BadDevicesListsAreRefusedAtTheDevicesParameterWithoutEal) {
    auto refused = [](const Given& given) -> std::string {
        try {
            PortSink::check_params(params_of("port_out", given));
        } catch (const LocatedError& e) {
            return e.what();
        }
        return "accepted";
    };
    // `devices` is the given key on line 2, or line 3 after `device`.
    EXPECT_NE(refused({{"devices", "net_null0,,net_null1"}}).find("app.yaml:2:5: 'devices' word 2 is empty"),
              std::string::npos) << refused({{"devices", "net_null0,,net_null1"}});
    EXPECT_NE(refused({{"devices", "tx_pcap=a.pcap, net_pcap0"}}).find("app.yaml:2:5: 'devices' starts with the argument"),
              std::string::npos);
    EXPECT_NE(refused({{"device", "net_null0"}, {"devices", "net_null1"}}).find("app.yaml:3:5: 'device' and 'devices' both"),
              std::string::npos);
    std::string many;
    for (int i = 0; i < 129; ++i) many += (i != 0 ? "," : "") + std::string("net_null") + std::to_string(i);
    EXPECT_NE(refused({{"devices", many}}).find("lists 129 ports; a port is 0-127"), std::string::npos);
    EXPECT_EQ(refused({{"devices", "net_null0, net_null1"}}), "accepted");
}

TEST(PortParameters, AQueueOutsideQueuesIsRefusedAtTheQueueParameter) {
    try {
        PortSource src(params_of("port", {{"device", "net_null0"}, {"rx_queue", "2"}, {"queues", "2"}}));
        ADD_FAILURE() << "accepted queue 2 of 2";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 3);
        EXPECT_NE(e.message().find("'rx_queue' 2 does not exist"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace tp
