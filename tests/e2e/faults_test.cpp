// Faults a user meets, driven through the CLI: signals during a run, the default pool of
// wide farms, pools too small or too large for the host, and a tile held up on purpose (the
// `chaos:` setting). Each run ends with every packet accounted for, or with an error that
// names the setting to change and its value.
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

// synth -> parse -> farm of `workers` pass workers -> drop, on defaults unless `extra` says more.
std::string farm_yaml(unsigned workers, const std::string& count, const std::string& extra = "") {
    return extra + "pipeline:\n  - { stage: synth, count: " + count + " }\n  - parse\n  - farm:\n      name: fw\n"
           "      workers: " + std::to_string(workers) + "\n      worker: [pass]\n  - drop\n";
}

const nlohmann::json& tile_row(const nlohmann::json& j, const std::string& node) {
    for (const auto& t : j["tiles"])
        if (t["node"] == node) return t;
    static const nlohmann::json none;
    ADD_FAILURE() << "no tile " << node;
    return none;
}

// `tilepipe run CONF --json FILE` in the background, for signals.
class SignalledRun {
public:
    explicit SignalledRun(const std::string& conf) {
        pid_ = fork();
        if (pid_ == 0) {
            const std::string cmd = "cd '" + source_root() + "' && exec '" + tilepipe_bin() + "' run '" + conf +
                                    "' --json " + json_ + " >" + out_ + " 2>" + err_;
            execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    ~SignalledRun() {
        if (pid_ > 0 && status_ < 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        for (const auto& p : {json_, out_, err_}) fs::remove(p);
    }
    // Waits (at most a minute: a safety net, not a timing) until stderr says `text`.
    bool wait_for(const std::string& text) const {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (err().find(text) == std::string::npos) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return true;
    }
    void signal(int s) const { ASSERT_EQ(kill(pid_, s), 0); }
    // The exit status (128 + signal when killed).
    int wait() {
        int st = 0;
        waitpid(pid_, &st, 0);
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
    }
    std::string err() const { return read_file(err_); }
    std::string out() const { return read_file(out_); }
    nlohmann::json report() const { return nlohmann::json::parse(read_file(json_), nullptr, false); }

private:
    pid_t pid_ = -1;
    int status_ = -1;
    std::string json_ = tmp_path("bg.json"), out_ = tmp_path("bg.out"), err_ = tmp_path("bg.err");
};

constexpr const char* kDrainNotice = "stopping the sources; what is in flight drains";

TEST(Faults, SigtermWhileASinkIsHeldUpDrainsEveryPacketInFlightAndExits143) {
    // The sink stands still for 5 s early on: its queues and everything before them fill and
    // the source backs off. SIGTERM (after the first progress line) stops the source; what is
    // in flight waits for the sink and then reaches it.
    const std::string conf = app_file("term.yaml", farm_yaml(4, "0", "chaos: { stall: drop, stall_ms: 5000, after_packets: 50000 }\n"));
    SignalledRun run(conf);
    ASSERT_TRUE(run.wait_for("packets")) << run.err();
    run.signal(SIGTERM);
    EXPECT_EQ(run.wait(), 143) << run.err();
    const nlohmann::json j = run.report();
    expect_exact(j);
    EXPECT_EQ(j["drops"], 0);
    EXPECT_EQ(j["delivered"], j["packets"]);
    EXPECT_GE(j["packets"].get<uint64_t>(), 50000u);
    EXPECT_TRUE(j["header"]["interrupted"].get<bool>());
    EXPECT_FALSE(j["header"]["cut_short"].get<bool>());
    EXPECT_EQ(j["header"]["exit_status"], 143);
    EXPECT_GE(tile_row(j, "drop")["stalled_ms"].get<double>(), 5000.0);
    EXPECT_NE(run.err().find(kDrainNotice), std::string::npos) << run.err();
    EXPECT_NE(run.err().find("tilepipe: interrupted by SIGTERM\n"), std::string::npos) << run.err();
    fs::remove(conf);
}

TEST(Faults, ASecondSigintCutsTheDrainShortAndCountsEveryPacketItFreed) {
    // The sink stands still for ten minutes: the first Ctrl-C's drain cannot end, the second
    // ends the run at once, with a report that lists what was lost where.
    const std::string conf = app_file("cut.yaml", farm_yaml(4, "0", "chaos: { stall: drop, stall_ms: 600000, after_packets: 50000 }\n"));
    SignalledRun run(conf);
    ASSERT_TRUE(run.wait_for("packets")) << run.err();
    run.signal(SIGINT);
    ASSERT_TRUE(run.wait_for(kDrainNotice)) << run.err();
    run.signal(SIGINT);
    EXPECT_EQ(run.wait(), 130) << run.err();
    const nlohmann::json j = run.report();
    expect_exact(j);
    EXPECT_TRUE(j["header"]["cut_short"].get<bool>());
    const uint64_t lost = j["cut_short"]["lost"].get<uint64_t>();
    EXPECT_GT(lost, 0u);
    EXPECT_EQ(j["drops"].get<uint64_t>(), lost) << "only the cut dropped packets";
    uint64_t listed = 0;
    for (const auto& n : j["cut_short"]["nodes"]) listed += n["lost"].get<uint64_t>();
    EXPECT_EQ(listed, lost);
    EXPECT_NE(run.out().find("cut short: a second signal ended the drain; " + std::to_string(lost) + " packets in flight"),
              std::string::npos)
        << run.out();
    EXPECT_NE(run.err().find("tilepipe: interrupted by Ctrl-C (SIGINT), then cut short by a second signal"),
              std::string::npos)
        << run.err();
    fs::remove(conf);
}

TEST(Faults, FarmsOf64And256WorkersRunOnTheDefaultPool) {
    for (unsigned workers : {64u, 256u}) {
        const std::string conf = app_file("wide.yaml", farm_yaml(workers, "200000"));
        const nlohmann::json j = run_json("run " + conf);
        expect_exact(j);
        EXPECT_EQ(j["delivered"], 200000) << workers << " workers";
        EXPECT_EQ(j["tiles"].size(), workers + 3) << "synth, parse (the emitter), the workers, drop (the collector)";
        fs::remove(conf);
    }
}

TEST(Faults, TheTilepro64AndEpiphany64MeshesFullyUsedRunOnDefaults) {
    // Every usable tile holds a node (the preset says how many are usable when a farm is too wide).
    for (const std::string topology : {"tilepro64", "epiphany64"}) {
        const std::string wide = app_file("wide.yaml", farm_yaml(1000, "1", "topology: " + topology + "\n"));
        const CommandResult refused = tilepipe("validate " + wide);
        fs::remove(wide);
        std::smatch m;
        ASSERT_TRUE(std::regex_search(refused.err, m, std::regex("has ([0-9]+) usable"))) << refused.err;
        const unsigned tiles = static_cast<unsigned>(std::stoul(m[1].str()));
        ASSERT_GE(tiles, 56u) << topology;
        const std::string conf = app_file("mesh.yaml", farm_yaml(tiles - 3, "100000", "topology: " + topology + "\n"));
        const nlohmann::json j = run_json("run " + conf);
        expect_exact(j);
        EXPECT_EQ(j["delivered"], 100000) << topology;
        EXPECT_EQ(j["tiles"].size(), tiles) << topology;
        fs::remove(conf);
    }
}

TEST(Faults, APoolLargerThanTheHostsMemoryIsRefusedWithThePoolSizeThatFits) {
    const CommandResult r = tilepipe("run conf/default.yaml --quiet --set pool.mbufs=67108864");
    EXPECT_EQ(r.status, 1) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("tilepipe: not enough memory for DPDK: .* set pool.mbufs to ([0-9]+) "
                                                       "or fewer \\(--set pool.mbufs=\\1\\), or leave it out for this "
                                                       "app's default of 8191\n")))
        << r.err;
}

TEST(Faults, APoolThatDoesNotFitTheMemoryGivenToDpdkSaysWhatToChange) {
    // The user's own EAL memory, far too small for the default pool: the error says which pool
    // fits in it, and how much memory the pool needs.
    const CommandResult r = tilepipe("run conf/default.yaml --quiet --eal '--no-huge -m 16'");
    EXPECT_EQ(r.status, 1) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("cannot create mbuf pool 'tp_pkts_0' of 8191 mbufs: .*set "
                                                       "pool.mbufs to ([0-9]+) or fewer \\(--set pool.mbufs=\\1\\), or give "
                                                       "DPDK more memory \\(--eal \"-m ([0-9]+)\"\\)")))
        << r.err;
    // Both remedies work.
    const nlohmann::json fewer = run_json("run conf/default.yaml --set synth.count=10000 --eal '--no-huge -m 16' "
                                          "--set pool.mbufs=" + m[1].str());
    expect_exact(fewer);
    const nlohmann::json more = run_json("run conf/default.yaml --set synth.count=10000 --eal '--no-huge -m " + m[2].str() + "'");
    expect_exact(more);
}

TEST(Faults, APoolBelowWhatTheThreadCachesKeepIsRefusedByRunAndValidateWithTheNumberNeeded) {
    const CommandResult run = tilepipe("run conf/farm.yaml --quiet --set pool.mbufs=100");
    const CommandResult validate = tilepipe("validate conf/farm.yaml --set pool.mbufs=100");
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_EQ(validate.status, 2) << validate.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(run.err, m, std::regex("tilepipe: --set pool.mbufs=100: pool.mbufs 100 is too small for "
                                                         "this app: .* set pool.mbufs to at least ([0-9]+)")))
        << run.err;
    EXPECT_EQ(validate.err, run.err);
    // The number it asks for runs the app with every packet delivered.
    const nlohmann::json j = run_json("run conf/farm.yaml --set synth.count=100000 --set pool.mbufs=" + m[1].str());
    expect_exact(j);
    EXPECT_EQ(j["delivered"], 100000);
}

TEST(Faults, AStalledWorkerBehindAPoolSmallerThanTheQueuesFillsThemAndNothingIsLost) {
    // 8 workers' queues hold 16k descriptors, the pool 2047 mbufs: the source waits for mbufs
    // (back-pressure), worker 3 stands still for 300 ms, the run completes with every packet.
    const std::string conf = app_file("stall.yaml", farm_yaml(8, "200000",
                                                              "pool: { mbufs: 2047, cache: 32 }\n"
                                                              "chaos: { stall: fw.3, stall_ms: 300, after_packets: 1000 }\n"));
    CommandResult r;
    const nlohmann::json j = run_json("run " + conf, &r);
    expect_exact(j);
    EXPECT_EQ(j["delivered"], 200000);
    EXPECT_EQ(j["drops"], 0);
    EXPECT_GE(tile_row(j, "fw.3")["stalled_ms"].get<double>(), 300.0);
    EXPECT_EQ(tile_row(j, "fw.2")["stalled_ms"].get<double>(), 0.0);
    fs::remove(conf);
}

TEST(Faults, AChaosStallNamingNoNodeIsRefusedWithTheNodesThereAre) {
    const CommandResult r = tilepipe("validate conf/farm.yaml --set chaos.stall=rtc.9");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--set chaos.stall=rtc.9: chaos.stall: no node named 'rtc.9' (nodes: synth, parse, "),
              std::string::npos)
        << r.err;
}

// A disk that fills: the run may grow any file to `room` bytes and no further
// (run_command_with_file_limit: RLIMIT_FSIZE, no root and no file system of the test's own,
// so these tests run everywhere). The write that does not fit fails, partly written first,
// with EFBIG ("File too large") where a full disk says ENOSPC: the same failed write to the
// stage. Every other output of the run goes to /dev/null or a pipe (the report: `--json -`).
struct FailedRun {
    CommandResult result;
    nlohmann::json report;
};

FailedRun run_on_full_disk(const std::string& args, uint64_t room) {
    FailedRun r;
    r.result = run_command_with_file_limit(
        "cd '" + source_root() + "' && exec '" + tilepipe_bin() + "' " + args + " --quiet --json -", room);
    r.report = nlohmann::json::parse(r.result.out, nullptr, false);
    return r;
}

const std::string kFull = "File too large";

bool ends_with_whole_line(const std::string& text) { return text.empty() || text.back() == '\n'; }

TEST(Faults, ACaptureOutputOnADiskThatFillsFailsTheRunNamingTheFileAndKeepsEveryPacketCounted) {
    const std::string out = tmp_path("fw.pcap");
    const FailedRun r = run_on_full_disk("run conf/firewall.yaml --loop 3 --set pcap_out.file=" + out +
                                         " --set flow_table.export=/dev/null", 256 << 10);
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: node 'pcap_out' failed: cannot write capture '" + out + "': " + kFull),
              std::string::npos)
        << r.result.err;
    expect_exact(r.report);
    EXPECT_GT(r.report["drops"].get<uint64_t>(), 0u);
    EXPECT_LE(fs::file_size(out), uintmax_t{256} << 10);
    // What the file holds is whole: tcpdump reads every packet the report says it wrote.
    const TcpdumpView td = tcpdump_view(out);
    EXPECT_EQ(td.status, 0);
    EXPECT_EQ(uint64_t(td.packets), r.report["delivered"].get<uint64_t>());
    fs::remove(out);
}

TEST(Faults, AFlowExportOnAFullDiskFailsTheRunNamingTheFileAndEndsWithAWholeLine) {
    const std::string csv = tmp_path("flows.csv");
    const FailedRun r = run_on_full_disk("run conf/firewall.yaml --loop 3 --set flow_table.export=" + csv +
                                         " --set pcap_out.file=/dev/null", 6000);
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("failed: cannot write '" + csv + "': " + kFull), std::string::npos) << r.result.err;
    expect_exact(r.report);
    const std::string text = read_file(csv);
    fs::remove(csv);
    EXPECT_GT(text.size(), 0u);
    EXPECT_LE(text.size(), 6000u);
    EXPECT_TRUE(ends_with_whole_line(text)) << "...'" << text.substr(text.size() - std::min<size_t>(text.size(), 60)) << "'";
}

TEST(Faults, AnAlertLogOnAFullDiskFailsTheRunNamingTheFileAndHoldsOnlyWholeJsonLines) {
    const std::string log = tmp_path("alerts.jsonl");
    const FailedRun r = run_on_full_disk("run conf/ids.yaml --loop 20 --set payload_match.alerts=" + log +
                                         " --set pcap_out.file=/dev/null", 6000);
    EXPECT_EQ(r.result.status, 1) << r.result.err;
    EXPECT_NE(r.result.err.find("tilepipe: node 'payload_match' failed: cannot write '" + log + "': " + kFull),
              std::string::npos)
        << r.result.err;
    expect_exact(r.report);
    const std::string text = read_file(log);
    fs::remove(log);
    ASSERT_GT(text.size(), 0u);
    EXPECT_LE(text.size(), 6000u);
    EXPECT_TRUE(ends_with_whole_line(text));
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
}

TEST(Faults, AnOutputThatCannotBeCreatedIsRefusedNamingTheFileBeforeAnyPacketFlows) {
    const CommandResult folder = tilepipe("run conf/firewall.yaml --quiet --set pcap_out.file=/nonexistent/fw.pcap");
    EXPECT_EQ(folder.status, 2);
    EXPECT_NE(folder.err.find("cannot write '/nonexistent/fw.pcap': folder '/nonexistent': No such file or directory"),
              std::string::npos)
        << folder.err;
    // /proc takes no new files: found when the stage opens it, before the clock starts.
    const CommandResult proc = tilepipe("run conf/firewall.yaml --quiet --set pcap_out.file=" + tmp_path("fw.pcap") +
                                        " --set flow_table.export=/proc/flows.csv");
    fs::remove(tmp_path("fw.pcap"));
    EXPECT_EQ(proc.status, 1);
    EXPECT_NE(proc.err.find("cannot write flow export: cannot write '/proc/flows.csv'"), std::string::npos) << proc.err;
    EXPECT_EQ(proc.out.find("packets delivered"), std::string::npos) << "no run, no report";
}

}  // namespace
}  // namespace tp::test
