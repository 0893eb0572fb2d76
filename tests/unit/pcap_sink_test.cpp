// The `pcap_out` sink: what it writes is what arrived, readable by tcpdump and libpcap.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/stage/registry.hpp"
#include "stages/pcap_sink.hpp"
#include "stages/pcap_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;

// Parameters as a config gives them: the node on line 1 of app.yaml, each given key on its own
// line after it, in order.
ParamValues params_of(const std::string& stage, const Given& given) { return test::stage_params(stage, given); }

MbufPool app_pool(uint32_t mbufs = 8191, uint16_t data_room = 2048) {
    return test::named_pool("sink_test_", {.mbufs = mbufs, .data_room = data_room});
}

struct Written {
    std::vector<std::string> frames;
    std::vector<uint32_t> lengths;  // original lengths
    std::vector<timespec> stamps;
    int precision = -1;
};

Written read_with_libpcap(const std::string& path) {
    Written w;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (p == nullptr) {
        ADD_FAILURE() << err;
        return w;
    }
    pcap_pkthdr* h;
    const u_char* data;
    while (pcap_next_ex(p, &h, &data) == 1) {
        w.frames.emplace_back(reinterpret_cast<const char*>(data), h->caplen);
        w.lengths.push_back(h->len);
        w.stamps.push_back(timespec{h->ts.tv_sec, h->ts.tv_usec});
    }
    pcap_close(p);
    return w;
}

uint64_t tcpdump_count(const std::string& path) {
    FILE* f = popen(("tcpdump --count -r '" + path + "' 2>/dev/null").c_str(), "r");
    if (f == nullptr) return 0;
    char buf[256] = {};
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    const int status = pclose(f);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "tcpdump cannot read " << path;
    return std::strtoull(std::string(buf, n).c_str(), nullptr, 10);
}

// Source to sink, burst by burst, as a two-node pipeline would run them; returns the packets.
uint64_t replay_into(PcapSource& src, PcapSink& sink) {
    Burst b;
    uint64_t packets = 0;
    for (;;) {
        b.n = 0;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        EXPECT_EQ(st, SourceStatus::Produced);
        packets += b.n;
        sink.process(b);
        EXPECT_EQ(b.n, 0) << "a sink consumes its burst";
    }
    return packets;
}

class PcapSinkTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_pcap_sink"};
    const std::string dir_ = scratch_.path();
};

TEST(PcapSinkRegistration, IsASinkNamedPcapOutWithItsParameters) {
    const StageInfo* info = StageRegistry::instance().find("pcap_out");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->kind, StageKind::Sink);
    EXPECT_TRUE(info->find_param("file")->required);
    EXPECT_EQ(info->find_param("snaplen")->default_text, "262144");
}

class RoundTrip : public PcapSinkTest, public testing::WithParamInterface<const char*> {};

TEST_P(RoundTrip, EveryReplayedFrameIsWrittenInOrderAndReadsBackIdentical) {
    const std::string in = test::pcaps_dir() + "/" + GetParam();
    const std::string out = dir_ + "/out.pcap";
    PcapSource src(params_of("pcap", {{"file", in}}));
    PcapSink sink(params_of("pcap_out", {{"file", out}}));
    // A small data room makes most frames chains, so the sink must linearise them.
    MbufPool pool = app_pool(8191, 512);
    StageEnv env{&pool, "node", 0};
    src.open(env);
    sink.open(env);
    replay_into(src, sink);
    src.close();
    sink.close();

    const Written original = read_with_libpcap(in);
    const Written written = read_with_libpcap(out);
    EXPECT_EQ(tcpdump_count(out), original.frames.size());
    EXPECT_EQ(written.frames.size(), original.frames.size());
    EXPECT_TRUE(written.frames == original.frames) << "written bytes differ from the capture's";
    for (size_t i = 0; i < written.frames.size(); ++i)
        ASSERT_EQ(written.lengths[i], written.frames[i].size()) << "record " << i + 1;
    EXPECT_EQ(sink.stats().drops.get(), 0u);
    EXPECT_EQ(pool.available(), pool.capacity());
}

INSTANTIATE_TEST_SUITE_P(SharedCaptures, RoundTrip,
                         testing::Values("pcpp__example.pcap", "tcpdump__bigtcp-ipv6-hbh.pcap",
                                         "zeek__irc-dcc-send.pcapng"),
                         [](const testing::TestParamInfo<const char*>& info) {
                             std::string n = info.param;
                             for (char& c : n)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return n;
                         });

TEST_F(PcapSinkTest, FramesLongerThanSnaplenAreCutAndKeepTheirOriginalLength) {
    const std::string in = test::pcaps_dir() + "/pcpp__ip4_fragments.pcap";
    const std::string out = dir_ + "/cut.pcap";
    PcapSource src(params_of("pcap", {{"file", in}}));
    PcapSink sink(params_of("pcap_out", {{"file", out}, {"snaplen", "100"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    src.open(env);
    sink.open(env);
    replay_into(src, sink);
    src.close();
    sink.close();

    const Written original = read_with_libpcap(in);
    const Written written = read_with_libpcap(out);
    ASSERT_EQ(written.frames.size(), original.frames.size());
    for (size_t i = 0; i < written.frames.size(); ++i) {
        EXPECT_EQ(written.frames[i], original.frames[i].substr(0, 100)) << "record " << i + 1;
        EXPECT_EQ(written.lengths[i], original.frames[i].size()) << "record " << i + 1;
    }
}

// Packets without a capture time (here a replay told to carry none) are stamped with the time
// they were written.
TEST_F(PcapSinkTest, RecordsOfPacketsWithoutACaptureTimeCarryTheWallClockInNanoseconds) {
    const std::string out = dir_ + "/clock.pcap";
    PcapSource src(params_of("pcap", {{"file", test::pcaps_dir() + "/tcpdump__802.1ad_QinQ.pcap"},
                                      {"timestamps", "replay"}}));
    PcapSink sink(params_of("pcap_out", {{"file", out}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    src.open(env);
    sink.open(env);
    timespec before{}, after{};
    clock_gettime(CLOCK_REALTIME, &before);
    replay_into(src, sink);
    clock_gettime(CLOCK_REALTIME, &after);
    src.close();
    sink.close();

    std::ifstream f(out, std::ios::binary);
    uint32_t magic = 0;
    f.read(reinterpret_cast<char*>(&magic), 4);
    EXPECT_EQ(magic, 0xa1b23c4du) << "a nanosecond-resolution pcap";
    const auto ns = [](const timespec& t) { return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec; };
    const Written written = read_with_libpcap(out);
    ASSERT_EQ(written.stamps.size(), 2u);
    for (const timespec& t : written.stamps) {
        EXPECT_GE(ns(t), ns(before));
        EXPECT_LE(ns(t), ns(after));
    }
}

TEST_F(PcapSinkTest, AnUnwritablePathIsRefusedAtTheFileParameter) {
    const std::string out = dir_ + "/no/such/dir/out.pcap";
    PcapSink sink(params_of("pcap_out", {{"file", out}}));
    MbufPool pool = app_pool(511);
    StageEnv env{&pool, "node", 0};
    try {
        sink.open(env);
        FAIL() << "open() accepted an unwritable path";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().file, "app.yaml");
        EXPECT_EQ(e.where().line, 2);
        EXPECT_EQ(e.message(), "cannot write capture '" + out + "': No such file or directory");
    }
    sink.close();  // closing a sink that never opened is harmless
}

TEST_F(PcapSinkTest, ASnaplenOutsideWhatReadersAcceptIsRefused) {
    for (const char* bad : {"0", "262145"}) {
        try {
            PcapSink sink(params_of("pcap_out", {{"file", dir_ + "/x.pcap"}, {"snaplen", bad}}));
            FAIL() << "snaplen " << bad << " was accepted";
        } catch (const LocatedError& e) {
            EXPECT_EQ(e.where().line, 3) << bad;
        }
    }
}

TEST_F(PcapSinkTest, AFileThatRefusesEveryWriteDropsEveryPacketAsWriteErrorAndFailsAtClose) {
    // /dev/full accepts the open and fails every write with ENOSPC.
    PcapSource src(params_of("pcap", {{"file", test::pcaps_dir() + "/pcpp__DnsPackets.pcap"}}));
    PcapSink sink(params_of("pcap_out", {{"file", "/dev/full"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    src.open(env);
    sink.open(env);
    const uint64_t packets = replay_into(src, sink);
    src.close();
    clear_stop_request();
    ASSERT_GT(packets, 0u);
    ASSERT_EQ(sink.drop_reasons().size(), 1u);
    EXPECT_EQ(sink.drop_reasons()[0], "write_error");
    EXPECT_EQ(sink.stats().drops.get(), packets);
    EXPECT_EQ(sink.stats().reason[0].get(), packets);
    EXPECT_EQ(pool.available(), pool.capacity()) << "dropped packets are freed too";
    try {
        sink.close();
        FAIL() << "close() after failed writes did not report them";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "cannot write capture '/dev/full': No space left on device (" +
                                             std::to_string(packets) + " packets dropped as write_error)");
    }
}

TEST_F(PcapSinkTest, AWriteCutShortDropsExactlyThePacketsWhoseRecordsDidNotReachTheFile) {
    // The file may grow to the middle of record k + 1: records 1..k are written, the rest are
    // write_error drops, and the file is cut back to its last whole record.
    const std::string in = test::pcaps_dir() + "/pcpp__example.pcap";
    const std::string out = dir_ + "/cut.pcap";
    const Written original = read_with_libpcap(in);
    ASSERT_GT(original.frames.size(), 40u) << "needs more than a burst";
    const size_t k = original.frames.size() / 2 + 3;  // not on a burst boundary
    uint64_t whole = 24;
    for (size_t i = 0; i < k; ++i) whole += 16 + original.frames[i].size();

    PcapSource src(params_of("pcap", {{"file", in}}));
    PcapSink sink(params_of("pcap_out", {{"file", out}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    src.open(env);
    sink.open(env);
    rlimit before{};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG
    rlimit limited = before;
    limited.rlim_cur = whole + 10;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
    const uint64_t packets = replay_into(src, sink);
    EXPECT_THROW(sink.close(), std::runtime_error);
    setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, old_handler);
    src.close();
    clear_stop_request();

    EXPECT_EQ(packets, original.frames.size());
    EXPECT_EQ(sink.stats().drops.get(), packets - k);
    EXPECT_EQ(sink.stats().reason[0].get(), packets - k);
    EXPECT_EQ(fs::file_size(out), whole);
    const Written written = read_with_libpcap(out);
    ASSERT_EQ(written.frames.size(), k);
    EXPECT_EQ(tcpdump_count(out), k);
    for (size_t i = 0; i < k; ++i) ASSERT_EQ(written.frames[i], original.frames[i]) << "record " << i + 1;
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PcapSinkTest, AnEmptyRunStillWritesAReadableEmptyCapture) {
    const std::string out = dir_ + "/empty.pcap";
    PcapSink sink(params_of("pcap_out", {{"file", out}}));
    MbufPool pool = app_pool(511);
    StageEnv env{&pool, "node", 0};
    sink.open(env);
    sink.close();
    EXPECT_EQ(fs::file_size(out), 24u);
    EXPECT_EQ(read_with_libpcap(out).frames.size(), 0u);
}

// ---- split by port ---------------------------------------------------------------------------

// Replays `capture`, giving the i-th packet the port port_of(i), into `sink`; returns the
// frames each port should get, in order.
template <typename PortOf>
std::vector<std::vector<std::string>> replay_by_port(const std::string& capture, PcapSink& sink, MbufPool& pool,
                                                     PortOf port_of) {
    PcapSource src(params_of("pcap", {{"file", capture}}));
    StageEnv env{&pool, "node", 0};
    src.open(env);
    std::vector<std::vector<std::string>> want(256);
    size_t i = 0;
    for (Burst b;;) {
        b.n = 0;
        if (src.produce(b) == SourceStatus::Done) break;
        for (PacketDesc& d : b) {
            d.port = port_of(i++);
            want[d.port].emplace_back(rte_pktmbuf_mtod(d.mbuf, const char*), rte_pktmbuf_data_len(d.mbuf));
        }
        sink.process(b);
        EXPECT_EQ(b.n, 0);
    }
    src.close();
    return want;
}

TEST_F(PcapSinkTest, WithPercentPEachPortsPacketsGoToTheirOwnCaptureInOrder) {
    const std::string capture = test::pcaps_dir() + "/pcpp__example.pcap";
    PcapSink sink(params_of("pcap_out", {{"file", dir_ + "/port%p.pcap"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    sink.open(env);
    // Ports 0, 2 and 7 in an uneven pattern; no packet for port 1.
    const auto want = replay_by_port(capture, sink, pool, [](size_t i) { return uint8_t(i % 5 == 0 ? 7 : i % 3 == 0 ? 2 : 0); });
    sink.close();
    EXPECT_EQ(sink.stats().drops.get(), 0u);
    EXPECT_FALSE(fs::exists(dir_ + "/port1.pcap")) << "a port without packets leaves no capture";
    const std::vector<PortTx> tx = sink.tx_by_port();
    ASSERT_EQ(tx.size(), 3u);
    size_t total = 0;
    for (size_t k = 0; k < tx.size(); ++k) {
        const unsigned port = tx[k].port;
        SCOPED_TRACE("port " + std::to_string(port));
        EXPECT_EQ(tx[k].to, dir_ + "/port" + std::to_string(port) + ".pcap");
        ASSERT_FALSE(want[port].empty());
        EXPECT_EQ(tx[k].packets, want[port].size());
        EXPECT_EQ(tcpdump_count(tx[k].to), want[port].size());
        EXPECT_EQ(read_with_libpcap(tx[k].to).frames, want[port]);
        total += want[port].size();
    }
    EXPECT_EQ(tx[0].port, 0);
    EXPECT_EQ(tx[1].port, 2);
    EXPECT_EQ(tx[2].port, 7);
    EXPECT_EQ(total, tcpdump_count(capture));
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PcapSinkTest, APortWhoseCaptureCannotBeCreatedCountsExactlyItsPacketsAsWriteErrors) {
    fs::create_directory(dir_ + "/0");  // port 1's directory is missing
    PcapSink sink(params_of("pcap_out", {{"file", dir_ + "/%p/out.pcap"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    sink.open(env);
    const auto want =
        replay_by_port(test::pcaps_dir() + "/pcpp__example.pcap", sink, pool, [](size_t i) { return uint8_t(i % 4 == 1); });
    EXPECT_TRUE(stop_requested()) << "a capture that cannot be made stops the run";
    clear_stop_request();
    try {
        sink.close();
        ADD_FAILURE() << "close() must fail the node";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(dir_ + "/1/out.pcap"), std::string::npos) << e.what();
    }
    ASSERT_FALSE(want[1].empty());
    EXPECT_EQ(sink.stats().drops.get(), want[1].size());
    EXPECT_EQ(sink.stats().reason[0].get(), want[1].size()) << "write_error";
    EXPECT_EQ(tcpdump_count(dir_ + "/0/out.pcap"), want[0].size());
    const std::vector<PortTx> tx = sink.tx_by_port();
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].packets, want[0].size());
    EXPECT_EQ(tx[1].packets, 0u);
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PcapSinkTest, WriteErrorsOfOnePortsCaptureAreThisStagesDropsAndNotThatPortsPackets) {
    // Port 1's capture is /dev/full (through a link): it opens, and every write fails.
    fs::create_symlink("/dev/full", dir_ + "/port1.pcap");
    PcapSink sink(params_of("pcap_out", {{"file", dir_ + "/port%p.pcap"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "node", 0};
    sink.open(env);
    const auto want =
        replay_by_port(test::pcaps_dir() + "/pcpp__example.pcap", sink, pool, [](size_t i) { return uint8_t(i % 3 == 1); });
    clear_stop_request();
    try {
        sink.close();
        ADD_FAILURE() << "close() must fail the node";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(dir_ + "/port1.pcap"), std::string::npos) << e.what();
    }
    const std::vector<PortTx> tx = sink.tx_by_port();
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].packets, want[0].size());
    EXPECT_EQ(tcpdump_count(dir_ + "/port0.pcap"), want[0].size());
    EXPECT_GT(sink.stats().drops.get(), 0u);
    EXPECT_EQ(sink.stats().reason[0].get(), sink.stats().drops.get()) << "write_error";
    EXPECT_EQ(tx[1].packets + sink.stats().drops.get(), want[1].size())
        << "each of port 1's packets is written or a drop, never both";
    EXPECT_EQ(pool.available(), pool.capacity());
}

TEST_F(PcapSinkTest, APerPortPatternInAMissingDirectoryIsRefusedAtOpen) {
    PcapSink sink(params_of("pcap_out", {{"file", dir_ + "/missing/out%p.pcap"}}));
    MbufPool pool = app_pool(511);
    StageEnv env{&pool, "node", 0};
    try {
        sink.open(env);
        FAIL() << "open() accepted a missing directory";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().line, 2);
        EXPECT_EQ(e.message(), "cannot write captures '" + dir_ + "/missing/out%p.pcap': directory '" + dir_ +
                                   "/missing': No such file or directory");
    }
    EXPECT_EQ(PcapSink::port_file("a%p/b%p.pcap", 12), "a12/b12.pcap");
}

}  // namespace
}  // namespace tp
