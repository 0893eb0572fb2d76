// synth: what a user relies on — every protocol it offers (udp, tcp, mix) comes out as such,
// with IPv4 and L4 checksums that tshark (an independent dissector) validates as good; flows
// are emitted round-robin and `count` is exact; imix follows 7:4:1 and keeps one frame per
// distinct size and flow; sizes and flow counts out of range are refused at their parameter
// before anything starts.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/synth_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/tshark.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/test_pool.hpp"

namespace tp {
namespace {

namespace fs = std::filesystem;
using Given = test::Given;

ParamValues synth_params(const Given& given) { return test::stage_params("synth", given); }

MbufPool synth_pool() { return test::named_pool("synth_test_", {.mbufs = 1023, .data_room = 9216}); }

// Every frame `given` makes a synth emit (its `count` must be set), in order.
std::vector<std::vector<uint8_t>> emitted(const Given& given) {
    MbufPool pool = synth_pool();
    SynthSource src(synth_params(given));
    StageEnv env;
    env.pool = &pool;
    env.node_name = "synth";
    src.open(env);
    std::vector<std::vector<uint8_t>> frames;
    for (int polls = 0; polls < 1000000; ++polls) {
        Burst b;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        for (const PacketDesc& d : b) {
            const uint8_t* p = rte_pktmbuf_mtod(d.mbuf, const uint8_t*);
            EXPECT_EQ(d.length, rte_pktmbuf_pkt_len(d.mbuf));
            frames.emplace_back(p, p + rte_pktmbuf_data_len(d.mbuf));
            rte_pktmbuf_free(d.mbuf);
        }
    }
    src.close();
    return frames;
}

std::string write_capture(const std::vector<std::vector<uint8_t>>& frames, const std::string& name) {
    const std::string path =
        (fs::temp_directory_path() / ("tp-synth-" + std::to_string(getpid()) + "-" + name + ".pcap")).string();
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* out = pcap_dump_open(dead, path.c_str());
    EXPECT_NE(out, nullptr) << pcap_geterr(dead);
    for (size_t i = 0; out != nullptr && i < frames.size(); ++i) {
        pcap_pkthdr h{};
        h.ts.tv_sec = 1;
        h.ts.tv_usec = static_cast<suseconds_t>(i);
        h.caplen = h.len = static_cast<bpf_u_int32>(frames[i].size());
        pcap_dump(reinterpret_cast<u_char*>(out), &h, frames[i].data());
    }
    if (out != nullptr) pcap_dump_close(out);
    pcap_close(dead);
    return path;
}

struct Dissected {
    std::string len, proto, src, dst, sport, dport, ip_checksum, l4_checksum;
};

// tshark's view of every frame of `path`, with IPv4, UDP and TCP checksum validation on.
// Checksum status: 0 bad, 1 good, 2 not checked.
std::vector<Dissected> dissect(const std::string& path) {
    const test::CommandResult r = test::run_command(
        "tshark -n -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE -T fields"
        " -E separator=/t -E occurrence=f -e frame.len -e ip.proto -e ip.src -e ip.dst -e udp.srcport -e udp.dstport"
        " -e tcp.srcport -e tcp.dstport -e ip.checksum.status -e udp.checksum.status -e tcp.checksum.status -r '" +
        path + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<Dissected> rows;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> f;
        std::istringstream cells(line);
        for (std::string c; std::getline(cells, c, '\t');) f.push_back(c);
        f.resize(11);
        const bool tcp = f[1] == "6";
        rows.push_back({f[0], f[1], f[2], f[3], tcp ? f[6] : f[4], tcp ? f[7] : f[5], f[8], tcp ? f[10] : f[9]});
    }
    return rows;
}

// ---- protocols and checksums ------------------------------------------------------------------

struct ProtoCase {
    std::string proto, size;
};

class SynthProtocols : public testing::TestWithParam<ProtoCase> {};

TEST_P(SynthProtocols, EveryFrameIsTheDeclaredProtocolWithChecksumsTsharkFindsGood) {
    if (!test::tshark_available()) GTEST_SKIP() << "tshark is not installed and could not be installed (no apt)";
    const auto [proto, size] = GetParam();
    const uint32_t flows = 6;
    const std::vector<std::vector<uint8_t>> frames =
        emitted({{"proto", proto}, {"size", size}, {"flows", std::to_string(flows)}, {"count", "30"}});
    ASSERT_EQ(frames.size(), 30u);
    const std::string path = write_capture(frames, proto + "-" + size);
    const std::vector<Dissected> rows = dissect(path);
    ASSERT_EQ(rows.size(), frames.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        SCOPED_TRACE("frame " + std::to_string(i));
        const uint32_t flow = uint32_t(i % flows);
        const bool tcp = proto == "tcp" || (proto == "mix" && flow % 2 == 1);
        EXPECT_EQ(rows[i].len, std::to_string(frames[i].size()));
        if (size != "imix") EXPECT_EQ(rows[i].len, size);
        EXPECT_EQ(rows[i].proto, tcp ? "6" : "17");
        EXPECT_EQ(rows[i].src, "10.0.0." + std::to_string(flow));
        EXPECT_EQ(rows[i].dst, "10.128.0." + std::to_string(flow));
        EXPECT_EQ(rows[i].sport, std::to_string(1024 + flow));
        EXPECT_EQ(rows[i].dport, std::to_string(80 + flow % 16));
        EXPECT_EQ(rows[i].ip_checksum, "1") << "IPv4 header checksum (1 = good)";
        EXPECT_EQ(rows[i].l4_checksum, "1") << (tcp ? "TCP" : "UDP") << " checksum (1 = good)";
    }
    fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Synth, SynthProtocols,
                         testing::Values(ProtoCase{"udp", "60"}, ProtoCase{"udp", "1514"}, ProtoCase{"tcp", "64"},
                                         ProtoCase{"tcp", "9000"}, ProtoCase{"mix", "imix"}, ProtoCase{"udp", "imix"}),
                         [](const auto& info) { return info.param.proto + "_" + info.param.size; });

// ---- sizes, flows and counts ----------------------------------------------------------------

TEST(Synth, ImixEmitsSevenSmallFourMediumOneLargeInEachTwelve) {
    const auto frames = emitted({{"size", "imix"}, {"flows", "5"}, {"count", "36"}});
    ASSERT_EQ(frames.size(), 36u);
    const size_t pattern[12] = {64, 64, 64, 64, 64, 64, 64, 594, 594, 594, 594, 1514};
    for (size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frames[i].size(), pattern[i % 12]) << "frame " << i;
}

TEST(Synth, ImixKeepsOneTemplateFramePerDistinctSizeAndFlow) {
    MbufPool pool = synth_pool();
    StageEnv env;
    env.pool = &pool;
    env.node_name = "synth";
    SynthSource imix(synth_params({{"size", "imix"}, {"flows", "1000"}}));
    imix.open(env);
    EXPECT_EQ(imix.template_frames(), 3u * 1000);
    EXPECT_EQ(imix.template_bytes(), (64u + 594 + 1514) * 1000);
    imix.close();
    SynthSource fixed(synth_params({{"size", "128"}, {"flows", "1000"}}));
    fixed.open(env);
    EXPECT_EQ(fixed.template_frames(), 1000u);
    EXPECT_EQ(fixed.template_bytes(), 128u * 1000);
    fixed.close();
}

TEST(Synth, CountIsExactAcrossBurstsAndFlowsComeRoundRobin) {
    const auto frames = emitted({{"flows", "3"}, {"count", "1001"}});
    ASSERT_EQ(frames.size(), 1001u);
    for (size_t i = 0; i < frames.size(); ++i) {
        ASSERT_EQ(frames[i].size(), 64u);
        EXPECT_EQ(frames[i][14 + 15], i % 3) << "frame " << i << ": last byte of the source address";
    }
}

TEST(Synth, AFrameLargerThanThePoolsDataRoomIsRefusedAtOpen) {
    MbufPoolSpec spec;
    spec.name = "synth_test_small";
    spec.mbufs = 63;
    spec.cache = 0;
    MbufPool pool(spec);
    StageEnv env;
    env.pool = &pool;
    env.node_name = "gen";
    SynthSource src(synth_params({{"size", "9000"}}));
    try {
        src.open(env);
        ADD_FAILURE() << "a 9000-byte frame was accepted by a 2048-byte pool";
    } catch (const LocatedError& e) {
        EXPECT_NE(std::string(e.what()).find("frame size 9000 exceeds the pool's data room 2048"), std::string::npos)
            << e.what();
    }
}

// ---- parameters -----------------------------------------------------------------------------

// The message check_params gives for `given`, as `validate` would report it; "" when accepted.
// What the config check says of these parameters: their declared ranges as they are parsed,
// then the stage's own checks.
std::string refusal(const Given& given) {
    const StageInfo* info = StageRegistry::instance().find("synth");
    try {
        info->check_params(synth_params(given));
    } catch (const LocatedError& e) {
        return e.what();
    }
    return "";
}

// What a paced synth emits on its first produce() and on one right after it.
// `pause`: how long between the two.
std::pair<uint16_t, SourceStatus> first_two_produces(const Given& given, uint16_t* first,
                                                      std::chrono::microseconds pause = std::chrono::microseconds(0)) {
    MbufPool pool = synth_pool();
    SynthSource src(synth_params(given));
    StageEnv env;
    env.pool = &pool;
    env.node_name = "synth";
    src.open(env);
    Burst a, b;
    src.produce(a);
    std::this_thread::sleep_for(pause);
    const SourceStatus st = src.produce(b);
    *first = a.n;
    for (const PacketDesc& d : a) rte_pktmbuf_free(d.mbuf);
    for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    return {b.n, st};
}

TEST(Synth, APacedStreamEmitsOnlyWhatIsDueAndIdlesUntilTheNext) {
    // At 1 packet per second (or 1 kb/s: one 64-byte frame in 0.5 s) the first packet is due
    // at once and the next one not before long after the second call.
    for (const Given& pace : {Given{{"pps", "1"}}, Given{{"mbps", "0.001"}}}) {
        uint16_t first = 0;
        const auto [n, st] = first_two_produces(pace, &first);
        EXPECT_EQ(first, 1u);
        EXPECT_EQ(n, 0u);
        EXPECT_EQ(st, SourceStatus::Idle);
    }
    uint16_t first = 0;
    EXPECT_EQ(first_two_produces({}, &first).first, kBurstMax);  // unpaced: full bursts
    EXPECT_EQ(first, kBurstMax);
}

TEST(Synth, APaceBeyondAnyTheHostReachesIsTopSpeed) {
    // 1e24 packets a second: after 1 ms the packets due outnumber what 64 bits count, and a
    // conversion of that to an integer once stalled the stream after its first packet.
    for (const char* pps : {"1e24", "1e308"}) {
        uint16_t first = 0;
        const auto [n, st] = first_two_produces({{"pps", pps}}, &first, std::chrono::milliseconds(1));
        EXPECT_EQ(first, 1u) << pps;  // the first is due at time 0, alone
        EXPECT_EQ(n, kBurstMax) << pps;
        EXPECT_EQ(st, SourceStatus::Produced) << pps;
    }
}

TEST(SynthParameters, AtMostOnePaceIsSetAndAZeroPaceIsTopSpeed) {
    EXPECT_EQ(refusal({{"pps", "1000"}, {"mbps", "100"}}),
              "app.yaml:3:5: 'mbps' paces the stream but 'pps' already does: set at most one of pps, mbps");
    EXPECT_EQ(refusal({{"pps", "0"}, {"mbps", "100"}}), "");
    EXPECT_EQ(refusal({{"pps", "-1"}}), "app.yaml:2:5: parameter 'pps' must be at least 0, got '-1'");
}

TEST(SynthParameters, SizesOutsideSixtyToNineThousandOrNotDecimalAreRefusedAtSize) {
    for (const char* size : {"59", "0", "9001", "65536", "abc", "64x", "-64", "0x40", " 64", "", "imix2", "99999999999"})
        EXPECT_EQ(refusal({{"size", size}}),
                  std::string("app.yaml:2:5: size must be imix or a frame length from 60 to 9000 bytes, got '") + size + "'")
            << size;
    for (const char* size : {"60", "64", "9000", "imix"}) EXPECT_EQ(refusal({{"size", size}}), "") << size;
}

TEST(SynthParameters, FlowsOutsideOneTo65536AreRefusedBeforeAnyNarrowing) {
    for (const char* flows : {"0", "65537", "4294967296", "4294967297"})
        EXPECT_EQ(refusal({{"flows", flows}}),
                  std::string("app.yaml:2:5: parameter 'flows' must be from 1 to 65536, got '") + flows + "'")
            << flows;
    for (const char* flows : {"1", "65536"}) EXPECT_EQ(refusal({{"flows", flows}}), "") << flows;
    EXPECT_EQ(refusal({{"duration", "-1"}}), "app.yaml:2:5: parameter 'duration' must be at least 0, got '-1'");
}

TEST(SynthParameters, TheConstructorRefusesWhatCheckParamsRefuses) {
    EXPECT_THROW(SynthSource(synth_params({{"flows", "4294967297"}})), LocatedError);
    EXPECT_THROW(SynthSource(synth_params({{"size", "10"}})), LocatedError);
}

}  // namespace
}  // namespace tp
