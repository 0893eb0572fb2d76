// Which time a packet carries, as a user comparing an app's output with its input capture
// expects it: a capture passed through keeps the timestamps tcpdump and tshark show for the
// input (the pcap source replays capture time by default for one loop at top speed), the
// flows of flow_table start and end when the capture says, and payload_match numbers its
// alerts' packets from 1 as Wireshark numbers frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"
#include "tests/support/tshark.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

std::vector<int64_t> times_of(const std::vector<FrameTime>& frames) {
    std::vector<int64_t> t;
    for (const FrameTime& f : frames) t.push_back(f.ns);
    return t;
}

// pcap -> pass -> pcap_out, with `src` settings added to the source.
std::string pass_through(const std::string& in, const std::string& out, const std::string& src = "") {
    return app_file("pass.yaml", "app: pass\npipeline:\n  - { stage: pcap, name: src, file: '" + in + "'" + src +
                                     " }\n  - { stage: pass }\n  - { stage: pcap_out, file: '" + out + "' }\n");
}

TEST(Timestamps, APassedThroughCaptureKeepsTheTimestampsTsharkShowsForTheInput) {
    ASSERT_TRUE(tshark_available());
    // Microsecond and nanosecond captures, pcap and pcapng, one of them Linux cooked.
    for (const char* name : {"pcpp__example.pcap", "tcpdump__tcp-handshake-nano.pcap", "pcpp__sll.pcap",
                             "zeek__irc-dcc-send.pcapng"}) {
        SCOPED_TRACE(name);
        const std::string in = pcaps_dir() + "/" + name, out = tmp_path("times.pcap");
        const CommandResult r = tilepipe("run '" + pass_through(in, out) + "' --quiet");
        ASSERT_EQ(r.status, 0) << r.err;
        const std::vector<int64_t> want = times_of(tshark_frame_times(in));
        ASSERT_FALSE(want.empty());
        EXPECT_EQ(times_of(tshark_frame_times(out)), want);
        fs::remove(out);
    }
}

// Paced, looped, or asked for: the replay's own clock (when the packets were written).
TEST(Timestamps, AReplayPacedLoopedOrAskedForCarriesTheTimeOfWriting) {
    ASSERT_TRUE(tshark_available());
    const std::string in = pcaps_dir() + "/pcpp__example.pcap", out = tmp_path("replay.pcap");
    const int64_t capture_end = times_of(tshark_frame_times(in)).back();
    for (const char* src : {", timestamps: replay", ", loop: 2", ", pps: 100000"}) {
        SCOPED_TRACE(src);
        const int64_t before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch()).count();
        const CommandResult r = tilepipe("run '" + pass_through(in, out, src) + "' --quiet");
        ASSERT_EQ(r.status, 0) << r.err;
        const std::vector<int64_t> got = times_of(tshark_frame_times(out));
        ASSERT_FALSE(got.empty());
        EXPECT_GT(before, capture_end) << "the capture is from the past";
        EXPECT_GE(*std::min_element(got.begin(), got.end()), before - 1000000000) << "written during the run";
        fs::remove(out);
    }
    // Asked for capture time while looping: each loop repeats the capture's times.
    const CommandResult r = tilepipe("run '" + pass_through(in, out, ", loop: 2, timestamps: capture") + "' --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<int64_t> twice = times_of(tshark_frame_times(in));
    const size_t n = twice.size();
    twice.insert(twice.end(), twice.begin(), twice.begin() + static_cast<long>(n));
    EXPECT_EQ(times_of(tshark_frame_times(out)), twice);
    fs::remove(out);
}

// Each flow's first_ns and last_ns are the capture times of its first and last packets: over
// all flows, the earliest and the latest IP frame of the capture as tshark reads it.
TEST(Timestamps, FlowTableReportsTheCapturesTimesOfEachFlow) {
    ASSERT_TRUE(tshark_available());
    const std::string in = pcaps_dir() + "/pcpp__example.pcap", flows = tmp_path("flows.jsonl");
    const std::string conf = app_file("flows.yaml", "app: flows\npipeline:\n  - { stage: pcap, file: '" + in +
                                                        "' }\n  - parse\n  - { stage: flow_table, export: '" + flows +
                                                        "', format: json }\n  - drop\n");
    const CommandResult r = tilepipe("run '" + conf + "' --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<int64_t> ip = times_of(tshark_frame_times(in, "ip or ipv6"));
    ASSERT_FALSE(ip.empty());
    int64_t first = INT64_MAX, last = 0;
    std::istringstream lines(read_file(flows));
    long n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        const nlohmann::json f = nlohmann::json::parse(line);
        const int64_t a = f["first_ns"].get<int64_t>(), b = f["last_ns"].get<int64_t>();
        EXPECT_LE(a, b) << line;
        EXPECT_NE(std::count(ip.begin(), ip.end(), a), 0) << "first_ns is no IP frame's time: " << line;
        EXPECT_NE(std::count(ip.begin(), ip.end(), b), 0) << "last_ns is no IP frame's time: " << line;
        first = std::min(first, a);
        last = std::max(last, b);
    }
    EXPECT_GT(n, 0);
    EXPECT_EQ(first, *std::min_element(ip.begin(), ip.end()));
    EXPECT_EQ(last, *std::max_element(ip.begin(), ip.end()));
    fs::remove(flows);
}

// An alert's `packet` is the frame number Wireshark shows (from 1) when payload_match sees the
// whole capture, and the alert capture's records carry those frames' times.
TEST(Timestamps, AlertsNumberPacketsAsWiresharkAndKeepTheirCaptureTimes) {
    ASSERT_TRUE(tshark_available());
    const std::string in = pcaps_dir() + "/pcpp__example.pcap", alerts = tmp_path("alerts.jsonl"),
                      out = tmp_path("alerts.pcap");
    const std::string conf =
        app_file("ids.yaml", "app: ids\npipeline:\n  - { stage: pcap, file: '" + in + "' }\n  - parse\n"
                             "  - { stage: payload_match, patterns: '" + source_root() + "/conf/data/ids.patterns', "
                             "mode: keep_matching, alerts: '" + alerts + "' }\n  - { stage: pcap_out, file: '" + out +
                             "' }\n");
    const CommandResult r = tilepipe("run '" + conf + "' --quiet");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<FrameTime> frames = tshark_frame_times(in);
    const std::vector<int64_t> written = times_of(tshark_frame_times(out));
    std::istringstream lines(read_file(alerts));
    size_t k = 0;
    for (std::string line; std::getline(lines, line); ++k) {
        const long packet = nlohmann::json::parse(line)["packet"].get<long>();
        ASSERT_GE(packet, 1) << line;
        ASSERT_LE(packet, static_cast<long>(frames.size())) << line;
        EXPECT_EQ(frames[static_cast<size_t>(packet - 1)].number, packet);
        ASSERT_LT(k, written.size());
        EXPECT_EQ(written[k], frames[static_cast<size_t>(packet - 1)].ns) << "alert " << line;
    }
    EXPECT_GT(k, 0u) << "no alert";
    EXPECT_EQ(k, written.size());
    fs::remove(alerts);
    fs::remove(out);
}

}  // namespace
}  // namespace tp::test
