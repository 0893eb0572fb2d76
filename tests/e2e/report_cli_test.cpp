// The run report as a packet engineer reads it from `tilepipe run`: the headline is what the
// sinks delivered over the time traffic flowed, `--json -` goes to standard output, the header
// says what ran, and the progress line is labelled, one line per interval in a log.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/cli.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

TEST(Report, ARateLimitedRunReportsTheRateItDeliveredNotTheRateItWasOffered) {
    // The source runs flat out for 2 s; the meter admits its 100-packet bucket and then 1000
    // packets a second (a bucket that size rides out the scheduling gaps of a busy machine):
    // the headline is about 1000 pps, the offered rate millions.
    const std::string conf = app_file("meter.yaml", "pipeline:\n  - { stage: synth, count: 0, duration: 2 }\n"
                                                    "  - { stage: rate_limit, pps: 1000, burst: 100 }\n  - drop\n");
    CommandResult r;
    const nlohmann::json j = run_json("run " + conf, &r);
    fs::remove(conf);
    ASSERT_FALSE(j.is_discarded()) << r.err;
    const double seconds = j["seconds"].get<double>();
    const double delivered_pps = j["delivered"].get<double>() / seconds;
    const double admitted_pps = 1000 + 100 / seconds;
    EXPECT_NEAR(delivered_pps, admitted_pps, admitted_pps * 0.03) << j["delivered"] << " in " << seconds;
    EXPECT_DOUBLE_EQ(j["mpps"].get<double>() * 1e6, delivered_pps);
    EXPECT_GT(j["offered_mpps"].get<double>(), 100 * j["mpps"].get<double>());
    EXPECT_GT(j["packets"].get<uint64_t>(), 100 * j["delivered"].get<uint64_t>());
    // The table says it in pps, never as 0.000 Mpps.
    EXPECT_TRUE(std::regex_search(r.out, std::regex(" packets delivered in [12]\\.[0-9]{3} s: 1\\.[01][0-9]{2} kpps")))
        << r.out;
    EXPECT_EQ(r.out.find("0.000"), std::string::npos) << r.out;
}

TEST(Report, JsonDashWritesTheReportToStandardOutputAndTheTableToStandardError) {
    fs::remove(source_root() + "/-");
    const CommandResult r = tilepipe("run conf/default.yaml --set synth.count=1000 --quiet --json -");
    EXPECT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["delivered"], 1000);
    EXPECT_NE(r.err.find("1000 packets delivered"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(source_root() + "/-")) << "a file named '-' was created";
}

TEST(Report, TheHeaderSaysWhatRanFromWhatAndHowItEnded) {
    const std::string cap = pcaps_dir() + "/pcpp__example.pcap";
    CommandResult r;
    const nlohmann::json j = run_json("run conf/forward.yaml --pcap " + cap + " --loop 2 --set src.pps=0", &r);
    ASSERT_FALSE(j.is_discarded()) << r.err;
    const nlohmann::json& h = j["header"];
    EXPECT_TRUE(std::regex_match(h["version"].get<std::string>(), std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << h;
    EXPECT_EQ(h["config"], "conf/forward.yaml");
    EXPECT_EQ(h["captures"], nlohmann::json::array({cap}));
    EXPECT_EQ(h["overrides"], nlohmann::json::array({"--pcap " + cap, "--loop 2", "--set src.pps=0"}));
    EXPECT_EQ(h["topology"], "host");
    EXPECT_TRUE(std::regex_match(h["start_time"].get<std::string>(),
                                 std::regex("20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z")))
        << h;
    EXPECT_FALSE(h["interrupted"].get<bool>());
    EXPECT_EQ(h["exit_status"], 0);
}

TEST(Report, CtrlCDuringAnEndlessReplayIsReportedAsInterruptedWithStatus130AndLabelledProgress) {
    const std::string json = tmp_path("int.json"), out = tmp_path("int.out"), err = tmp_path("int.err");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const std::string cmd = "cd '" + source_root() + "' && exec '" + tilepipe_bin() + "' run conf/forward.yaml --pcap " +
                                pcaps_dir() + "/pcpp__example.pcap --loop 0 --json " + json + " >" + out + " 2>" + err;
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    // Two progress lines (after 2 s, then each second), then a real SIGINT.
    const auto lines = [&] {
        const std::string e = read_file(err);
        return std::count(e.begin(), e.end(), '\n');
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (lines() < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st)) << "ended by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    EXPECT_EQ(WEXITSTATUS(st), 130) << read_file(err);

    // Standard error is no terminal: one labelled line per interval, no carriage returns.
    const std::string e = read_file(err);
    EXPECT_EQ(e.find('\r'), std::string::npos);
    std::istringstream in(e);
    std::string line;
    int progress = 0;
    const std::regex labelled("progress [0-9.]+ m?s: [0-9.]+( M)? packets; last [0-9.]+ m?s [0-9.]+ [kM]?pps "
                              "[0-9.]+ [kMG]?b/s; average [0-9.]+ [kM]?pps; loop [0-9]+");
    while (std::getline(in, line))
        if (line.rfind("progress ", 0) == 0) {
            ++progress;
            EXPECT_TRUE(std::regex_match(line, labelled)) << line;
        }
    EXPECT_GE(progress, 2) << e;
    EXPECT_NE(e.find("tilepipe: interrupted by Ctrl-C (SIGINT)"), std::string::npos) << e;

    const nlohmann::json j = nlohmann::json::parse(read_file(json), nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_TRUE(j["header"]["interrupted"].get<bool>());
    EXPECT_EQ(j["header"]["exit_status"], 130);
    EXPECT_EQ(j["unaccounted"], 0);
    EXPECT_EQ(j["delivered"], j["packets"]);
    EXPECT_NE(read_file(out).find("app forward (interrupted): "), std::string::npos) << read_file(out);
    for (const auto& p : {json, out, err}) fs::remove(p);
}

}  // namespace
}  // namespace tp::test
