// The `pcap` source: what a user relies on when replaying a capture: its registration, the
// descriptors it fills, loops and pacing, and its pools full again at the end. The shared
// captures against tcpdump, the formats and damaged files, and streaming have files of their
// own (pcap_captures_test, pcap_formats_test, pcap_stream_test).
#include "tests/support/pcap_source_fixture.hpp"

namespace tp {
namespace {

using namespace pcap_test;  // the shared fixture and its helpers

// ---- registration and descriptors ----------------------------------------------------------

TEST(PcapSourceRegistration, IsASourceNamedPcapWithItsParameters) {
    const StageInfo* info = StageRegistry::instance().find("pcap");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Source);
    ASSERT_NE(info->find_param("file"), nullptr);
    EXPECT_TRUE(info->find_param("file")->required);
    EXPECT_EQ(info->find_param("loop")->default_text, "1");
    for (const char* rate : {"pps", "mbps", "speed"}) {
        ASSERT_NE(info->find_param(rate), nullptr) << rate;
        EXPECT_EQ(info->find_param(rate)->type, ParamType::Double) << rate;
    }
    auto stage = info->create(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}}));
    EXPECT_EQ(stage->kind(), StageKind::Source);
}

TEST_F(PcapSourceTest, FillsFullBurstsOfDescriptorsStampedWithThePort) {
    PcapSource src(pcap_params({{"file", pcap_path("pcpp__DnsPackets.pcap")}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 7};
    src.open(env);
    EXPECT_EQ(src.template_packets(), 464u);

    Burst b;
    ASSERT_EQ(src.produce(b), SourceStatus::Produced);
    EXPECT_EQ(b.n, kBurstMax);
    for (const PacketDesc& d : b) {
        EXPECT_EQ(d.port, 7);
        EXPECT_EQ(d.mbuf->port, 7);
        EXPECT_EQ(d.flow_hash, 0u);
        EXPECT_EQ(d.type, 0);
        EXPECT_EQ(d.length, rte_pktmbuf_pkt_len(d.mbuf));
        rte_pktmbuf_free(d.mbuf);
    }
    drain(src);
    src.close();
}

TEST_F(PcapSourceTest, AFrameLongerThanAnAppMbufLeavesAsAChainWithSaturatedLength) {
    const std::string path = pcap_path("tcpdump__bigtcp-ipv6-hbh.pcap");
    PcapSource src(pcap_params({{"file", path}}));
    MbufPool pool = app_pool(511, 2048);
    StageEnv env{&pool, "src", 0};
    src.open(env);

    Burst b;
    ASSERT_EQ(src.produce(b), SourceStatus::Produced);
    ASSERT_EQ(b.n, 1);
    const PacketDesc& d = b.d[0];
    EXPECT_EQ(rte_pktmbuf_pkt_len(d.mbuf), 80094u);
    EXPECT_EQ(d.mbuf->nb_segs, (80094 + 2047) / 2048);
    EXPECT_EQ(d.length, PacketDesc::kLengthSaturated);
    EXPECT_EQ(frame_length(d), 80094u);
    EXPECT_EQ(frame_bytes(d.mbuf), read_with_libpcap(path).frames.at(0));
    rte_pktmbuf_free(d.mbuf);
    EXPECT_EQ(src.produce(b), SourceStatus::Done);
    src.close();
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PcapSourceTest, DownstreamMayEditPacketsWithoutChangingTheReplay) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"loop", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    Burst b;
    ASSERT_EQ(src.produce(b), SourceStatus::Produced);
    ASSERT_EQ(b.n, 4);  // two packets, twice
    const std::string original = frame_bytes(b.d[0].mbuf);
    std::memset(rte_pktmbuf_mtod(b.d[0].mbuf, void*), 0xee, 16);
    EXPECT_EQ(frame_bytes(b.d[2].mbuf), original);
    for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    src.close();
}

// ---- loop and pacing -----------------------------------------------------------------------

TEST_F(PcapSourceTest, LoopReplaysTheCaptureThatManyTimes) {
    PcapSource src(pcap_params({{"file", pcap_path("pcpp__DnsPackets.pcap")}, {"loop", "3"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    EXPECT_EQ(r.packets, 3 * src.template_packets());
    EXPECT_EQ(r.bytes, 3 * src.template_bytes());
    src.close();
}

TEST_F(PcapSourceTest, LoopZeroReplaysUntilStopped) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"loop", "0"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    uint64_t packets = 0;
    Burst b;
    for (int i = 0; i < 1000; ++i) {
        b.n = 0;
        ASSERT_EQ(src.produce(b), SourceStatus::Produced);
        packets += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    EXPECT_EQ(packets, 1000u * kBurstMax);
    src.close();
    EXPECT_EQ(src.produce(b), SourceStatus::Done) << "a closed source emits nothing";
}

TEST_F(PcapSourceTest, AnEmptyCaptureReplaysNothingEvenWhenLoopingForever) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__empty.pcap")}, {"loop", "0"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    EXPECT_EQ(src.template_packets(), 0u);
    Burst b;
    EXPECT_EQ(src.produce(b), SourceStatus::Done);
    EXPECT_EQ(b.n, 0);
    src.close();
}

// Pacing is checked functionally: the replay may not finish before the last packet is due,
// and must finish within a generous margin after (the test machine is shared).
void expect_paced(const Replay& r, double due_seconds) {
    EXPECT_GE(r.seconds, due_seconds * 0.98) << "the replay ran ahead of its pace";
    EXPECT_LE(r.seconds, due_seconds * 3 + 0.2) << "the replay lagged far behind its pace";
    EXPECT_GT(r.idle, 0u);
}

TEST_F(PcapSourceTest, PpsPacesThePacketRate) {
    PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"loop", "200"}, {"pps", "2000"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    ASSERT_EQ(r.packets, 400u);
    expect_paced(r, 399 / 2000.0);  // packet i is due at i / pps
    src.close();
}

TEST_F(PcapSourceTest, MbpsPacesTheFrameBitRate) {
    const std::string path = pcap_path("pcpp__DnsPackets.pcap");
    PcapSource src(pcap_params({{"file", path}, {"mbps", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    const CaptureContents c = read_with_libpcap(path);
    ASSERT_EQ(r.packets, c.frames.size());
    // A packet is due once the bits before it have gone out at the rate.
    expect_paced(r, double(c.bytes - c.frames.back().size()) * 8 / 2e6);
    src.close();
}

TEST_F(PcapSourceTest, SpeedFollowsTheCaptureTimestamps) {
    const std::string path = pcap_path("suricata__nfs3-01__input.pcap");  // 0.47 s recorded
    PcapSource src(pcap_params({{"file", path}, {"speed", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src);
    const CaptureContents c = read_with_libpcap(path);
    ASSERT_EQ(r.packets, c.frames.size());
    expect_paced(r, (c.seconds.back() - c.seconds.front()) / 2);
    src.close();
}

TEST_F(PcapSourceTest, SpeedReplaysBackwardAndInvalidTimestampsAsZeroGaps) {
    // 10.0 s, then 3 s earlier, then a fraction of 3e9 ns (not a time), then 10.1 s: the only
    // gap honoured is 0.1 s. Read literally these would wait years or underflow.
    const std::string path = write("jumps.pcap", pcap_bytes({{10, 0, frame(60, 'a')},
                                                             {7, 0, frame(60, 'b')},
                                                             {4000000000u, 3000000000u, frame(60, 'c')},
                                                             {10, 100000000, frame(60, 'd')}},
                                                            1, true));
    PcapSource src(pcap_params({{"file", path}, {"speed", "1"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src, false, std::chrono::seconds(5));
    EXPECT_EQ(r.packets, 4u);
    EXPECT_GE(r.seconds, 0.098);
    EXPECT_LT(r.seconds, 1.0);
    src.close();
}

TEST_F(PcapSourceTest, TwoPacingParametersAreRefusedAtTheSecond) {
    const std::string path = pcap_path("tcpdump__802.1ad_QinQ.pcap");
    try {
        PcapSource src(pcap_params({{"file", path}, {"pps", "1000"}, {"mbps", "10"}}));
        FAIL() << "pps and mbps together were accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 4) << "mbps, written after pps";
        EXPECT_NE(e.message().find("'mbps'"), std::string::npos) << e.what();
        EXPECT_NE(e.message().find("'pps'"), std::string::npos) << e.what();
    }
    try {
        PcapSource src(pcap_params({{"file", path}, {"speed", "1"}, {"pps", "10"}}));
        FAIL() << "speed and pps together were accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 4) << "pps, written after speed";
        EXPECT_NE(e.message().find("'pps'"), std::string::npos) << e.what();
    }
}

TEST_F(PcapSourceTest, ANegativeRateIsRefusedAtItsParameter) {
    try {
        PcapSource src(pcap_params({{"file", pcap_path("tcpdump__802.1ad_QinQ.pcap")}, {"speed", "-2"}}));
        FAIL() << "a negative speed was accepted";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 3);
    }
}

// ---- pools ---------------------------------------------------------------------------------

TEST_F(PcapSourceTest, BothPoolsAreFullAgainAfterReplayAndClose) {
    PcapSource src(pcap_params({{"file", pcap_path("pcpp__example.pcap")}, {"loop", "2"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    ASSERT_GT(src.template_pool_capacity(), 0u);
    EXPECT_EQ(src.template_pool_available(), 0u) << "every template mbuf holds part of a frame";
    drain(src);
    EXPECT_EQ(pool.available(), pool.capacity());
    src.close();
    EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
}

TEST_F(PcapSourceTest, AnExhaustedAppPoolMakesTheSourceWaitButNeverLoseAPacket) {
    const std::string path = pcap_path("pcpp__DnsPackets.pcap");
    PcapSource src(pcap_params({{"file", path}}));
    MbufPool pool = app_pool(63);
    StageEnv env{&pool, "src", 0};
    src.open(env);

    std::vector<std::string> seen;
    std::vector<rte_mbuf*> in_flight;
    uint64_t idle = 0;
    Burst b;
    for (;;) {
        b.n = 0;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        if (st == SourceStatus::Idle) {
            // Downstream finally frees what it holds.
            ++idle;
            ASSERT_FALSE(in_flight.empty()) << "idle with nothing in flight";
            for (rte_mbuf* m : in_flight) rte_pktmbuf_free(m);
            in_flight.clear();
            continue;
        }
        for (const PacketDesc& d : b) {
            seen.push_back(frame_bytes(d.mbuf));
            in_flight.push_back(d.mbuf);
        }
    }
    for (rte_mbuf* m : in_flight) rte_pktmbuf_free(m);
    EXPECT_GT(idle, 0u);
    EXPECT_TRUE(seen == read_with_libpcap(path).frames) << "packets were lost or reordered";
    EXPECT_EQ(pool.available(), pool.capacity());
    src.close();
}

TEST_F(PcapSourceTest, TheMemoryACaptureNeedsIsKnownBeforeLoadingIt) {
    const Location cli{"<command line>"};
    EXPECT_EQ(CaptureFile::memory_needed(pcap_path("tcpdump__empty.pcap"), cli), 0u);
    const std::string path = pcap_path("pcpp__example.pcap");
    const uint64_t needed = CaptureFile::memory_needed(path, cli);
    CaptureFile loaded(path, cli);
    MbufPoolSpec spec;
    spec.mbufs = loaded.pool_capacity();
    spec.cache = 0;
    spec.data_room = loaded.segment_room();
    EXPECT_EQ(needed, MbufPool::footprint(spec));
    EXPECT_GT(needed, loaded.bytes());
    // A damaged record ends the capture: what comes before it is what memory is needed for.
    EXPECT_GT(CaptureFile::memory_needed(pcap_path("suricata__fuzz.pcap"), cli), 0u);
    EXPECT_THROW(CaptureFile::memory_needed(pcap_path("libpcap__pcap-invalid-version-1.pcap"), cli), LocatedError);
}

}  // namespace
}  // namespace tp
