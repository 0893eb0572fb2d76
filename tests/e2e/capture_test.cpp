// Captures as a packet engineer replays them: one larger than the memory the replay may take
// streams from the file and still delivers exactly what tcpdump and capinfos count, and
// `topo` draws any app in the width it is given without cutting a name.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

// Runs `cmd` (a shell command line ending in the program to measure, which the shell execs)
// and returns that process's exit status and peak resident memory in bytes.
std::pair<int, uint64_t> run_measured(const std::string& cmd) {
    const pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return {-1, 0};
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), uint64_t(usage.ru_maxrss) * 1024};
}

// capinfos' count and data bytes for a capture.
std::pair<long, long> capinfos_counts(const std::string& file) {
    const CommandResult r = run_command("capinfos -M -c -d '" + file + "'");
    std::smatch m;
    long packets = -1, bytes = -1;
    if (std::regex_search(r.out, m, std::regex(R"(Number of packets:\s+(\d+))"))) packets = std::stol(m[1]);
    if (std::regex_search(r.out, m, std::regex(R"(Data size:\s+(\d+) bytes)"))) bytes = std::stol(m[1]);
    return {packets, bytes};
}

TEST(Capture, OneLargerThanTheMemoryGivenToItsReplayStreamsEveryPacket) {
    // 120 MB of 1514-byte frames; the replay may take 8 MiB for it.
    const std::string cap = tmp_path("big.pcap");
    ASSERT_EQ(tilepipe("run conf/gen.yaml --quiet --set synth.size=1514 --set synth.count=80k --set out.file=" + cap).status, 0);
    const long tcpdump_packets = std::stol("0" + run_command("tcpdump --count -r '" + cap + "' 2>/dev/null").out);
    const auto [packets, bytes] = capinfos_counts(cap);
    ASSERT_EQ(tcpdump_packets, 80000);
    ASSERT_EQ(packets, tcpdump_packets);

    // The same run on a capture of 1000 frames: what the app takes whatever it replays.
    const std::string small = tmp_path("small.pcap");
    ASSERT_EQ(tilepipe("run conf/gen.yaml --quiet --set synth.size=1514 --set synth.count=1000 --set out.file=" + small).status, 0);
    const std::string json = tmp_path("big.json");
    const auto replay = [&](const std::string& file) {
        return run_measured("'" + tilepipe_bin() + "' run '" + source_root() + "/conf/forward.yaml' --pcap '" + file +
                            "' --loop 1 --set src.preload_mb=8 --quiet --json '" + json + "' >/dev/null");
    };
    const auto [small_status, baseline] = replay(small);
    ASSERT_EQ(small_status, 0);
    const auto [status, peak] = replay(cap);
    ASSERT_EQ(status, 0);
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["packets"].get<long>(), tcpdump_packets);
    EXPECT_EQ(j["bytes"].get<long>(), bytes);
    EXPECT_EQ(j["unaccounted"], 0);
    EXPECT_TRUE(j["pools_full"].get<bool>());
    // Preloaded, the templates alone would add more than the file's size to the baseline; the
    // stream adds its 8 MiB of buffers.
    EXPECT_LT(peak, baseline + fs::file_size(cap) / 4)
        << "the replay held the capture in memory (baseline " << baseline << " bytes)";
    fs::remove(small);
    fs::remove(cap);
    fs::remove(json);
}

// A capture taken with `-s 60` (editcap's snap length): `greater 1000` keeps what tcpdump keeps,
// counting the lengths on the wire, and a chain that passes every packet writes records with
// the input's original lengths.
TEST(Capture, ASnapLengthTruncatedCaptureFiltersAndIsWrittenBackByItsWireLengths) {
    const std::string snapped = tmp_path("snap60.pcap");
    ASSERT_EQ(run_command("editcap -s 60 '" + pcaps_dir() + "/pcpp__example.pcap' '" + snapped + "'").status, 0);
    const long want = std::stol("0" + run_command("tcpdump --count -r '" + snapped + "' greater 1000 2>/dev/null").out);
    ASSERT_GT(want, 1000);
    const std::string json = tmp_path("snap.json");
    ASSERT_EQ(tilepipe("run conf/filter.yaml --quiet --pcap '" + snapped + "' --set 'filter.expr=greater 1000' --json " + json).status, 0);
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    for (const auto& st : j["stages"])
        if (st["name"] == "filter") EXPECT_EQ(st["out"].get<long>(), want);

    const std::string out = tmp_path("snap_out.pcap");
    const std::string conf = tmp_path("pass.yaml");
    std::ofstream(conf) << "app: pass\npipeline:\n  - { stage: pcap, file: '" << snapped
                        << "' }\n  - { stage: pass }\n  - { stage: pcap_out, file: '" << out << "' }\n";
    const CommandResult passed = tilepipe("run '" + conf + "' --quiet");
    ASSERT_EQ(passed.status, 0) << passed.err;
    const auto lengths = [](const std::string& f) {
        return run_command("tshark -n -r '" + f + "' -T fields -e frame.len -e frame.cap_len 2>/dev/null").out;
    };
    EXPECT_EQ(lengths(out), lengths(snapped));
    fs::remove(snapped);
    fs::remove(out);
    fs::remove(conf);
    fs::remove(json);
}

// Records that hold no bytes are skipped, warned about once and counted in the report.
TEST(Capture, SkippedRecordsAreInTheReportTableAndJson) {
    const std::string file = pcaps_dir() + "/tcpdump__bgp_vpn_rt-oobr.pcap";
    const std::string json = tmp_path("skip.json");
    const CommandResult r = tilepipe("run conf/forward.yaml --quiet --loop 1 --pcap '" + file + "' --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["packets"], 1);
    EXPECT_EQ(j["capture"]["skipped_records"], 37);
    EXPECT_EQ(j["capture"]["skipped"]["empty_record"], 37);
    EXPECT_EQ(j["capture"]["errors"], 0);
    EXPECT_NE(r.out.find("capture: 37 records skipped, not replayed (empty_record 37)"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one warning: " << r.err;
    EXPECT_NE(r.err.find("skipped 37 records with no captured bytes (first: record 2)"), std::string::npos) << r.err;
    fs::remove(json);
}

TEST(Capture, TopoFoldsTheMapToTheWidthAndNeverCutsAName) {
    const std::string json = tmp_path("topo.json");
    for (const char* topology : {"host", "tilepro64", "epiphany16"}) {
        SCOPED_TRACE(topology);
        const CommandResult r = run_command("cd '" + source_root() + "' && COLUMNS=72 '" + tilepipe_bin() +
                                            "' topo conf/farm.yaml --topology " + topology + " --json " + json);
        ASSERT_EQ(r.status, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(read_file(json));
        std::istringstream lines(r.out);
        std::string line, words;
        int columns = 0;
        while (std::getline(lines, line)) {
            if (line.rfind("channels:", 0) == 0) break;
            EXPECT_LE(line.size(), 72u) << line;
            EXPECT_EQ(line.find('~'), std::string::npos) << "a cut name: " << line;
            std::istringstream w(line);
            for (std::string word; w >> word;) {
                words += " " + word + " ";
                if (word.rfind("x=", 0) == 0 && line.rfind("      x=", 0) == 0) ++columns;
            }
        }
        EXPECT_EQ(columns, j["width"].get<int>()) << "every column of the mesh is drawn once";
        for (const auto& n : j["nodes"])
            EXPECT_NE(words.find(" " + n["name"].get<std::string>() + " "), std::string::npos)
                << n["name"] << " is not in the map or its legend";
    }
    fs::remove(json);
}

}  // namespace
}  // namespace tp::test
