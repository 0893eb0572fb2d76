// What `tilepipe run` says when a run does not go to plan, as a user meets it: a file that
// refuses writes, a stage that throws, a packet lost without a count, mbufs not returned, and
// Ctrl-C. Each leaves an exact report and the exit status README documents: 0 ok, 1 the run
// failed (with a message naming the node or the file), 3 packets unaccounted or mbufs leaked,
// 130 interrupted by Ctrl-C.
// `tilepipe_faulty` is the CLI built with stages that misbehave on purpose
// (tests/support/faulty_stages.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/cli.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

struct RunOutcome {
    CommandResult result;
    nlohmann::json report;  // discarded when no report was written
};

// `BIN run ARGS --quiet --json FILE` from the source root.
RunOutcome run_with_report(const std::string& bin, const std::string& args) {
    const std::string json = tmp_path("exit.json");
    fs::remove(json);
    RunOutcome r;
    r.result = run_command("cd '" + source_root() + "' && '" + bin + "' run " + args + " --quiet --json " + json);
    r.report = nlohmann::json::parse(read_file(json), nullptr, false);
    fs::remove(json);
    return r;
}

std::string faulty_bin() {
    const char* b = std::getenv("TILEPIPE_FAULTY_BIN");
    return b != nullptr ? b : "tilepipe_faulty";
}

const nlohmann::json& stage_row(const nlohmann::json& j, const std::string& name) {
    for (const auto& s : j["stages"])
        if (s["name"] == name) return s;
    static const nlohmann::json none;
    ADD_FAILURE() << "no stage " << name;
    return none;
}

TEST(ExitStatus, ACaptureThatCannotBeWrittenFailsTheRunNamingTheFileAndCountsEveryPacketAsWriteError) {
    const RunOutcome r = run_with_report(tilepipe_bin(), "conf/gen.yaml --set synth.count=0 --set out.file=/dev/full");
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: node 'out' failed: cannot write capture '/dev/full': No space left on device"),
              std::string::npos)
        << r.result.err;
    expect_exact(r.report);
    // Nothing reached /dev/full: every packet the sink got is a write_error drop; the endless
    // source ended because the sink stopped the run.
    const nlohmann::json& out = stage_row(r.report, "out");
    EXPECT_GT(out["in"].get<uint64_t>(), 0u);
    EXPECT_EQ(out["out"], 0);
    EXPECT_EQ(out["drop_reasons"]["write_error"], out["in"]);
    EXPECT_EQ(r.report["delivered"], 0);
    ASSERT_EQ(r.report["failures"].size(), 1u);
    EXPECT_EQ(r.report["failures"][0]["node"], "out");
}

TEST(ExitStatus, AFlowExportThatCannotBeWrittenFailsTheRunNamingTheFile) {
    const RunOutcome r = run_with_report(tilepipe_bin(), "conf/flowmon.yaml --set flow_table.export=/dev/full");
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("failed: cannot write '/dev/full': No space left on device"), std::string::npos)
        << r.result.err;
    expect_exact(r.report);
    EXPECT_GE(r.report["failures"].size(), 1u);

    // A CSV export writes its header at open: the file is refused before the run starts.
    const RunOutcome csv = run_with_report(tilepipe_bin(),
                                    "conf/flowmon.yaml --set flow_table.export=/dev/full --set flow_table.format=csv");
    EXPECT_EQ(csv.result.status, 1) << csv.result.err;
    EXPECT_NE(csv.result.err.find("--set flow_table.export=/dev/full: cannot write flow export: cannot write "
                                  "'/dev/full': No space left on device"),
              std::string::npos)
        << csv.result.err;
}

TEST(ExitStatus, AnAlertLogThatCannotBeWrittenFailsTheRunNamingTheFile) {
    const std::string pcap = tmp_path("alerts.pcap");
    const RunOutcome r = run_with_report(tilepipe_bin(), "conf/ids.yaml --set payload_match.alerts=/dev/full --set pcap_out.file=" + pcap);
    fs::remove(pcap);
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("failed: cannot write '/dev/full': No space left on device"), std::string::npos)
        << r.result.err;
    expect_exact(r.report);
}

TEST(ExitStatus, AJsonReportThatCannotBeWrittenFailsTheRunNamingTheFile) {
    const CommandResult r = tilepipe("run conf/default.yaml --set synth.count=1000 --quiet --json /dev/full");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("tilepipe: --json /dev/full: cannot write the report: No space left on device"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("unaccounted 0; pools full"), std::string::npos) << "the table still prints";
}

TEST(ExitStatus, AStageThatThrowsFailsTheRunWithItsNodeAndErrorAndAnExactReport) {
    const std::string conf = app_file("throw.yaml",
                                      "pipeline:\n  - { stage: synth, count: 0 }\n"
                                      "  - { stage: throw_after, name: boom, packets: 10000, message: table corrupt }\n"
                                      "  - drop\n");
    const RunOutcome r = run_with_report(faulty_bin(), conf);
    fs::remove(conf);
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: node 'boom' failed: table corrupt\n"), std::string::npos) << r.result.err;
    EXPECT_NE(r.result.out.find("node 'boom' failed: table corrupt"), std::string::npos) << "the table says it too";
    expect_exact(r.report);
    ASSERT_EQ(r.report["failures"].size(), 1u);
    EXPECT_EQ(r.report["failures"][0]["error"], "table corrupt");
}

TEST(ExitStatus, AStageThatFailsToOpenFailsTheStartNamingItClosingEarlierStagesAndRemovingTheirOutputs) {
    const std::string alerts = tmp_path("open-alerts.jsonl"), marks = tmp_path("open-marks");
    std::ofstream(alerts) << "an earlier run's alerts\n";
    fs::remove(marks);
    const std::string conf = app_file(
        "open.yaml", "runtime: { fuse: never }\npipeline:\n  - { stage: synth, count: 100 }\n"
                     "  - { stage: payload_match, patterns: '" + source_root() + "/conf/data/ids.patterns', alerts: '" + alerts + "' }\n"
                     "  - { stage: close_mark, name: mark, file: '" + marks + "' }\n"
                     "  - { stage: throw_after, name: boom, in_open: true, message: table missing }\n  - drop\n");
    const RunOutcome r = run_with_report(faulty_bin(), conf);
    fs::remove(conf);
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: " + conf + ":6:14: stage 'boom' (throw_after) failed to open: table missing\n"),
              std::string::npos)
        << r.result.err;
    EXPECT_TRUE(r.report.is_discarded()) << "no run, no report";
    EXPECT_EQ(read_file(marks), "mark\n") << "the stage opened before it was closed";
    EXPECT_EQ(read_file(alerts), "an earlier run's alerts\n") << "a failed start leaves an earlier output alone";
    for (const auto& e : fs::directory_iterator(fs::path(alerts).parent_path()))
        EXPECT_EQ(e.path().filename().string().find(fs::path(alerts).filename().string() + ".tilepipe-"), std::string::npos)
            << "a temporary output was left behind: " << e.path();
    fs::remove(alerts);
    fs::remove(marks);
}

TEST(ExitStatus, APacketFreedWithoutACountIsExitStatusThree) {
    const std::string conf = app_file("vanish.yaml",
                                      "pipeline:\n  - { stage: synth, count: 1000 }\n  - { stage: vanish, every: 100 }\n  - drop\n");
    const RunOutcome r = run_with_report(faulty_bin(), conf);
    fs::remove(conf);
    EXPECT_EQ(r.result.status, 3) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: accounting failed: 10 packets unaccounted, pools full"), std::string::npos)
        << r.result.err;
    EXPECT_EQ(r.report["unaccounted"], 10);
}

TEST(ExitStatus, MbufsNotReturnedToThePoolAreExitStatusThree) {
    const std::string conf = app_file("hold.yaml", "pipeline:\n  - { stage: synth, count: 1000 }\n  - hold\n");
    const RunOutcome r = run_with_report(faulty_bin(), conf);
    fs::remove(conf);
    EXPECT_EQ(r.result.status, 3) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: accounting failed: 0 packets unaccounted, pools not full"), std::string::npos)
        << r.result.err;
    EXPECT_FALSE(r.report["pools_full"].get<bool>());
}

TEST(ExitStatus, AFileReplayedThroughAPortIsReadToItsEndAndEveryRecordIsAccountedFor) {
    // A pool far smaller than the capture and a sink that writes every packet: the device may
    // find no mbuf for some records. Whatever it lost is reported before the source, and the
    // replay still ends at the file's end, not at the first silence.
    const std::string cap = pcaps_dir() + "/zeek__irc-dcc-send.pcapng";
    const TcpdumpView td = tcpdump_view(cap);
    ASSERT_EQ(td.status, 0);
    ASSERT_GT(td.packets, 600);
    const std::string written = tmp_path("port.pcap");
    const std::string conf = app_file("port.yaml", "pool: { mbufs: 64, cache: 0 }\nqueue: 1024\npipeline:\n"
                                                   "  - { stage: port, file: '" + cap + "' }\n"
                                                   "  - { stage: pcap_out, file: '" + written + "' }\n");
    const RunOutcome r = run_with_report(tilepipe_bin(), conf);
    fs::remove(conf);
    fs::remove(written);
    EXPECT_EQ(r.result.status, 0) << r.result.err;
    expect_exact(r.report);
    const uint64_t seen = r.report["delivered"].get<uint64_t>() + r.report["drops"].get<uint64_t>() +
                          r.report["lost_before_source"].get<uint64_t>();
    EXPECT_EQ(seen, static_cast<uint64_t>(td.packets));
    EXPECT_EQ(stage_row(r.report, "port")["lost_before"], r.report["lost_before_source"]);
}

TEST(ExitStatus, CtrlCEndsAnEndlessRunWithAnExactReportSayingInterruptedAndStatus130) {
    const std::string json = tmp_path("sigint.json"), out = tmp_path("sigint.out"), err = tmp_path("sigint.err");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const std::string cmd = "cd '" + source_root() + "' && exec '" + tilepipe_bin() +
                                "' run conf/default.yaml --set synth.count=0 --json " + json + " >" + out + " 2>" + err;
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    // The progress line (after 2 s) says the run is under way; then a real SIGINT.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (read_file(err).find("packets") == std::string::npos && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st)) << "ended by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    EXPECT_EQ(WEXITSTATUS(st), 130) << read_file(err);
    const nlohmann::json j = nlohmann::json::parse(read_file(json), nullptr, false);
    expect_exact(j);
    EXPECT_GT(j["packets"].get<uint64_t>(), 0u);
    EXPECT_EQ(j["delivered"], j["packets"]);
    EXPECT_NE(read_file(out).find("unaccounted 0; pools full"), std::string::npos);
    EXPECT_TRUE(j["header"]["interrupted"].get<bool>());
    EXPECT_NE(read_file(out).find("\ninterrupted: "), std::string::npos) << read_file(out);
    for (const auto& p : {json, out, err}) fs::remove(p);
}

}  // namespace
}  // namespace tp::test
