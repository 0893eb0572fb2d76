// Live telemetry as a user reads it: while `tilepipe run` lasts, DPDK's telemetry socket
// (under the EAL runtime directory of the run's --file-prefix) answers /tilepipe/... with the
// run's counters, both to a client speaking the socket protocol and to the stock
// dpdk-telemetry.py (Debian's dpdk-dev); a socket that cannot be made leaves the run going
// with one warning; --stats-interval writes per-interval lines that add up to the report.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <algorithm>

#include "framework/eal/eal_session.hpp"
#include "tests/support/background_run.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/process.hpp"
#include "framework/metrics/telemetry_client.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

// A file prefix of this test process's own, and the runtime directory EAL makes for it.
struct Prefix {
    std::string name = "tp-tel-" + std::to_string(getpid());
    std::string dir = eal_runtime_dir({"--file-prefix", name});
    std::string socket = dir + "/dpdk_telemetry.v2";
    ~Prefix() { fs::remove_all(dir); }
};

// Connects once the run's socket is up and its app is running; null when it never was.
std::unique_ptr<TelemetryClient> connect_when_running(const BackgroundRun& run, const Prefix& p) {
    const auto deadline = clock::now() + kPatience;
    while (clock::now() < deadline && run.alive()) {
        if (fs::exists(p.socket)) {
            auto c = std::make_unique<TelemetryClient>(p.socket);
            if (c->connected()) {
                const nlohmann::json s = c->query("/tilepipe/stats");
                if (s.is_object() && s["state"] == "running" && s["packets"].get<uint64_t>() > 0) return c;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return nullptr;
}

std::vector<std::string> strings(const nlohmann::json& a) { return a.get<std::vector<std::string>>(); }

TEST(Telemetry, EndpointsAnswerWithTheRunsCountersWhileItLasts) {
    const Prefix p;
    const std::string json = tmp_path("tel.json");
    BackgroundRun run("conf/default.yaml --set synth.count=0 --quiet --json " + json + " --eal '--file-prefix " +
                      p.name + "'");
    auto client = connect_when_running(run, p);
    ASSERT_NE(client, nullptr) << "no running app answered on " << p.socket << ": " << run.err();
    EXPECT_EQ(client->greeting()["pid"], run.pid()) << "the socket is the run's own";

    // The counters move while the run lasts.
    const nlohmann::json first = client->query("/tilepipe/stats");
    nlohmann::json later = first;
    const auto deadline = clock::now() + kPatience;
    while (later["packets"] == first["packets"] && clock::now() < deadline) later = client->query("/tilepipe/stats");
    EXPECT_GT(later["packets"].get<uint64_t>(), first["packets"].get<uint64_t>());
    EXPECT_EQ(later["app"], "default");
    EXPECT_GT(std::stod(later["mpps"].get<std::string>()), 0.0);
    EXPECT_GT(std::stod(later["gbps_l1"].get<std::string>()), std::stod(later["gbps_l2"].get<std::string>()));
    // 64-byte frames. A live view reads its counters one after the other while the source
    // counts on (framework/metrics/live_view.hpp): the two may be a few bursts apart; the final
    // report, read after the join, holds them exactly (below).
    const uint64_t live_bytes = later["bytes"].get<uint64_t>(), live_packets = later["packets"].get<uint64_t>();
    EXPECT_EQ(live_bytes % 64, 0u);
    EXPECT_LE(std::max(live_bytes / 64, live_packets) - std::min(live_bytes / 64, live_packets), 4u * 32) << later;

    const nlohmann::json nodes = client->query("/tilepipe/nodes");
    ASSERT_TRUE(nodes.is_object()) << nodes;
    EXPECT_EQ(strings(nodes["name"]), (std::vector<std::string>{"synth", "parse", "drop"}));
    EXPECT_GT(nodes["out"][0].get<uint64_t>(), 0u);
    EXPECT_EQ(nodes["drops"], nlohmann::json({0, 0, 0}));
    EXPECT_GE(nodes["out"][0].get<uint64_t>(), nodes["in"][1].get<uint64_t>()) << "parse gets what synth made";
    const nlohmann::json parse = client->query("/tilepipe/nodes,parse");
    EXPECT_EQ(parse["name"], "parse");
    EXPECT_GT(parse["in"].get<uint64_t>(), 0u);
    EXPECT_TRUE(client->query("/tilepipe/nodes,nosuch").is_null()) << "an unknown node is null";

    const nlohmann::json tiles = client->query("/tilepipe/tiles");
    EXPECT_EQ(strings(tiles["node"]), (std::vector<std::string>{"synth", "parse", "drop"}));
    for (const auto& b : tiles["busy_fraction"]) {
        EXPECT_GE(std::stod(b.get<std::string>()), 0.0);
        EXPECT_LE(std::stod(b.get<std::string>()), 1.01);
    }
    const nlohmann::json channels = client->query("/tilepipe/channels");
    EXPECT_EQ(strings(channels["from"]), (std::vector<std::string>{"synth", "parse"}));
    EXPECT_EQ(strings(channels["to"]), (std::vector<std::string>{"parse", "drop"}));
    ASSERT_EQ(channels["queued"].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_GE(channels["queued"][i].get<int>(), 0) << "ring channels can tell";
        EXPECT_LE(channels["queued"][i].get<int>(), channels["capacity"][i].get<int>());
    }

    // The app's edges as wired, each with what its sender handed it so far.
    const nlohmann::json edges = client->query("/tilepipe/edges");
    EXPECT_EQ(strings(edges["from"]), (std::vector<std::string>{"synth", "parse"}));
    EXPECT_EQ(strings(edges["output"]), (std::vector<std::string>{"out", "out"}));
    EXPECT_EQ(strings(edges["to"]), (std::vector<std::string>{"parse", "drop"}));
    EXPECT_GT(edges["packets"][0].get<uint64_t>(), 0u);

    // End-to-end latency so far, sampled by default.
    const nlohmann::json latency = client->query("/tilepipe/latency");
    EXPECT_EQ(latency["mode"], "sample 64") << latency;
    EXPECT_GT(latency["samples"].get<uint64_t>(), 0u);
    EXPECT_GT(std::stod(latency["p50_us"].get<std::string>()), 0.0);
    EXPECT_GE(std::stod(latency["p99_us"].get<std::string>()), std::stod(latency["p50_us"].get<std::string>()));

    client.reset();
    EXPECT_EQ(run.stop(), 130) << "Ctrl-C's status: " << run.err();
    const nlohmann::json report = nlohmann::json::parse(read_file(json), nullptr, false);
    fs::remove(json);
    ASSERT_FALSE(report.is_discarded());
    EXPECT_GE(report["packets"].get<uint64_t>(), later["packets"].get<uint64_t>());
    EXPECT_EQ(report["bytes"].get<uint64_t>(), 64 * report["packets"].get<uint64_t>());
    EXPECT_EQ(report["unaccounted"], 0);
}

std::string dpdk_telemetry_script() {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/usr/share/dpdk/usertools"})
        if (fs::exists(std::string(dir) + "/dpdk-telemetry.py")) return std::string(dir) + "/dpdk-telemetry.py";
    return "";
}

TEST(Telemetry, TheStockDpdkTelemetryScriptReadsTheEndpoints) {
    const std::string script = dpdk_telemetry_script();
    ASSERT_FALSE(script.empty()) << "dpdk-telemetry.py not found: install Debian's dpdk-dev (scripts/bootstrap.sh does)";
    const Prefix p;
    BackgroundRun run("conf/default.yaml --set synth.count=0 --quiet --eal '--file-prefix " + p.name + "'");
    ASSERT_NE(connect_when_running(run, p), nullptr) << run.err();
    // Not on a terminal, the script prints one JSON reply per command line it reads.
    const CommandResult r = run_command("printf '/tilepipe/stats\\n/tilepipe/nodes\\n/tilepipe/channels\\n' | python3 '" +
                                        script + "' -f " + p.name);
    EXPECT_EQ(r.status, 0) << r.err;
    std::istringstream lines(r.out);
    std::vector<nlohmann::json> replies;
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) replies.push_back(nlohmann::json::parse(line, nullptr, false));
    ASSERT_EQ(replies.size(), 3u) << r.out << r.err;
    EXPECT_EQ(replies[0]["/tilepipe/stats"]["state"], "running") << r.out;
    EXPECT_GT(replies[0]["/tilepipe/stats"]["packets"].get<uint64_t>(), 0u);
    EXPECT_EQ(replies[1]["/tilepipe/nodes"]["name"][1], "parse");
    EXPECT_EQ(replies[2]["/tilepipe/channels"]["transport"][0], "ring");
    EXPECT_EQ(run.stop(), 130) << "Ctrl-C's status: " << run.err();
}

TEST(Telemetry, ASocketThatCannotBeMadeLeavesTheRunGoingAndSaysSoOnce) {
    // A unix socket's path holds at most 107 bytes: this prefix's runtime directory is longer.
    const std::string prefix(100, 'p');
    const std::string dir = eal_runtime_dir({"--file-prefix", prefix});
    const CommandResult r =
        tilepipe("run conf/default.yaml --set synth.count=1000 --quiet --eal '--file-prefix " + prefix + "'");
    fs::remove_all(dir);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("delivered 1000"), std::string::npos) << r.out;
    const std::string warning = "tilepipe: warning: live telemetry is off: its socket path ";
    const size_t at = r.err.find(warning);
    EXPECT_NE(at, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(warning, at + 1), std::string::npos) << "said once: " << r.err;
}

// The busy shares (the column after node and stage) of each row of the frames in `text`.
std::vector<std::vector<int>> busy_columns(const std::string& text) {
    std::vector<std::vector<int>> frames;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("node ", 0) == 0) frames.emplace_back();
        std::istringstream words(line);
        std::string node, stage, busy;
        if (!frames.empty() && words >> node >> stage >> busy && busy.back() == '%') frames.back().push_back(std::stoi(busy));
    }
    return frames;
}

TEST(Watch, NotOnATerminalItPrintsPlainFramesOfTheRunsNodesSortedByBusyShare) {
    const Prefix p;
    BackgroundRun run("conf/default.yaml --set synth.count=0 --quiet --eal '--file-prefix " + p.name + "'");
    ASSERT_NE(connect_when_running(run, p), nullptr) << run.err();
    const CommandResult r = tilepipe("watch " + p.name + " --interval 0.2 --frames 2");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find('\033'), std::string::npos) << "no terminal codes in a pipe";
    EXPECT_NE(r.out.find("app default  running"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" Mpps now "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("latency us  p50 "), std::string::npos) << r.out;
    const auto frames = busy_columns(r.out);
    ASSERT_EQ(frames.size(), 2u) << r.out;
    for (const auto& f : frames) {
        EXPECT_EQ(f.size(), 3u) << "synth, parse, drop: " << r.out;
        EXPECT_TRUE(std::is_sorted(f.rbegin(), f.rend())) << "busiest first: " << r.out;
    }
    for (const char* node : {"\nsynth ", "\nparse ", "\ndrop "}) EXPECT_NE(r.out.find(node), std::string::npos) << r.out;
    // By the socket's path too; on a terminal it draws in place and q quits (script(1): a pty).
    EXPECT_EQ(tilepipe("watch " + p.socket + " --frames 1").status, 0);
    const CommandResult tty = run_command("(sleep 1; printf q) | script -qec \"'" + tilepipe_bin() + "' watch " + p.name +
                                          " --interval 0.2\" /dev/null");
    EXPECT_EQ(tty.status, 0) << tty.err;
    EXPECT_NE(tty.out.find("\033[H\033[2J"), std::string::npos) << "redrawn in place";
    EXPECT_EQ(run.stop(), 130) << run.err();
    const CommandResult none = tilepipe("watch " + p.name);
    EXPECT_EQ(none.status, 1);
    EXPECT_NE(none.err.find("tilepipe: watch: no running tilepipe answers on " + p.socket), std::string::npos) << none.err;
}

// Another program's telemetry socket, or a damaged one: the DPDK greeting, then each command
// answered {"COMMAND": answer(COMMAND)}, as dpdk-testpmd answers /tilepipe/... with null.
class FakeTelemetry {
public:
    explicit FakeTelemetry(std::function<std::string(const std::string&)> answer)
        : path_(tmp_path("fake_telemetry.sock")), answer_(std::move(answer)) {
        fs::remove(path_);
        fd_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
        if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 4) != 0)
            throw std::runtime_error("cannot listen on " + path_);
        server_ = std::thread([this] {
            for (int c; (c = accept(fd_, nullptr, nullptr)) >= 0;) {
                const std::string hello = R"({"version": "DPDK 22.11.0", "pid": 1, "max_output_len": 16384})";
                send(c, hello.data(), hello.size(), MSG_NOSIGNAL);
                char buf[256];
                for (ssize_t n; (n = recv(c, buf, sizeof buf, 0)) > 0;) {
                    const std::string cmd(buf, static_cast<size_t>(n));
                    const std::string reply = "{\"" + cmd + "\": " + answer_(cmd) + "}";
                    send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
                }
                close(c);
            }
        });
    }
    ~FakeTelemetry() {
        shutdown(fd_, SHUT_RDWR);  // ends accept()
        server_.join();
        close(fd_);
        fs::remove(path_);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::function<std::string(const std::string&)> answer_;
    int fd_ = -1;
    std::thread server_;
};

TEST(Watch, ASocketThatDoesNotAnswerAsATilepipeRunIsRefusedNamingTheEndpointAndField) {
    const struct {
        std::function<std::string(const std::string&)> answer;
        std::string says;
    } cases[] = {
        {[](const std::string&) { return std::string("null"); },
         "/tilepipe/stats is null, not an object (another program's socket, or a run still loading: try again once it runs)"},
        {[](const std::string&) { return std::string(R"({"state": 5})"); }, "/tilepipe/stats: 'state' is number, not a string"},
        {[](const std::string& cmd) {
             return std::string(cmd == "/tilepipe/nodes" ? R"({"name": ["a", "b"], "stage": ["x", "y", "z"], "in": [1, 2],
                                                              "out": [1, 2], "drops": [0, 0], "busy_fraction": ["0.5", "0.1"]})"
                                                         : R"({"state": "running", "app": "x", "seconds": "1"})");
         },
         "/tilepipe/nodes: 'stage' has 3 entries for 2 nodes"},
    };
    for (const auto& c : cases) {
        const FakeTelemetry fake(c.answer);
        const CommandResult r = tilepipe("watch " + fake.path() + " --frames 1");
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_EQ(r.err.substr(r.err.find("tilepipe: watch: " + fake.path() + " does not")),
                  "tilepipe: watch: " + fake.path() + " does not answer as a tilepipe run: " + c.says + "\n");
    }
    // A big app's reply cut at DPDK's 16 KiB (its last columns missing or short) is a run's:
    // drawn, saying which figures are missing.
    const FakeTelemetry cut([](const std::string& cmd) {
        return std::string(cmd == "/tilepipe/nodes" ? R"({"name": ["a", "b"], "stage": ["x", "y"], "in": [1, 2], "out": [1]})"
                                                    : R"({"state": "running", "app": "big", "seconds": "1"})");
    });
    const CommandResult r = tilepipe("watch " + cut.path() + " --frames 1");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("2 of 2 nodes lack some figures, shown as 0"), std::string::npos) << r.out;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] == '{') out.push_back(nlohmann::json::parse(line, nullptr, false));
    return out;
}

TEST(StatsInterval, OneLinePerIntervalWhoseCountsAddUpToTheReport) {
    const std::string stats = tmp_path("stats.jsonl");
    CommandResult r;
    const nlohmann::json report =
        run_json("run conf/default.yaml --set synth.count=3M --stats-interval 0.05 --stats-out " + stats, &r);
    const std::vector<nlohmann::json> lines = json_lines(read_file(stats));
    fs::remove(stats);
    ASSERT_FALSE(report.is_discarded());
    ASSERT_GE(lines.size(), 1u);
    uint64_t packets = 0, delivered = 0, parsed = 0, samples = 0;
    double t = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
        const nlohmann::json& l = lines[i];
        ASSERT_FALSE(l.is_discarded());
        EXPECT_EQ(l["interval"], i + 1);
        EXPECT_GT(l["t"].get<double>(), t);
        EXPECT_NEAR(l["seconds"].get<double>(), l["t"].get<double>() - t, 1e-6) << "each line covers its interval";
        t = l["t"].get<double>();
        EXPECT_NEAR(l["mpps"].get<double>(), l["delivered"].get<double>() / l["seconds"].get<double>() / 1e6, 1e-6)
            << "the delivered rate over the interval";
        EXPECT_FALSE(l.contains("unaccounted")) << "an end-of-run field";
        EXPECT_FALSE(l.contains("header")) << "the run's, in the final report";
        EXPECT_EQ(l["channels"].size(), 2u);
        EXPECT_TRUE(l["channels"][0].contains("queued"));
        packets += l["packets"].get<uint64_t>();
        delivered += l["delivered"].get<uint64_t>();
        parsed += l["stages"][1]["out"].get<uint64_t>();
        samples += l["latency_us"]["samples"].get<uint64_t>();
        if (l["latency_us"]["samples"].get<uint64_t>() > 0)
            EXPECT_LE(l["latency_us"]["p50"].get<double>(), l["latency_us"]["p99"].get<double>());
    }
    EXPECT_EQ(samples, report["latency_us"]["samples"].get<uint64_t>()) << "each sample in one interval";
    EXPECT_EQ(packets, 3000000u);
    EXPECT_EQ(delivered, report["delivered"].get<uint64_t>());
    EXPECT_EQ(parsed, 3000000u);
    // The last line ends with the run's window, or after it when a line was taken between the
    // last packet and the tiles' end (then there is nothing left for a last partial line).
    EXPECT_GE(t + 1e-9, report["seconds"].get<double>());
}

TEST(StatsInterval, WithoutAFileTheLinesGoToStderr) {
    const CommandResult r = tilepipe("run conf/default.yaml --set synth.count=200k --quiet --stats-interval 10");
    EXPECT_EQ(r.status, 0) << r.err;
    const std::vector<nlohmann::json> lines = json_lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << "a run shorter than one interval: its last, partial line" << r.err;
    EXPECT_EQ(lines[0]["packets"], 200000);
    EXPECT_EQ(r.out.find("\"interval\""), std::string::npos) << "stdout keeps the table only";
}

TEST(StatsInterval, AnIntervalThatIsNotAPositiveNumberIsAUsageError) {
    for (const std::string bad : {"0", "-1", "abc"}) {
        const CommandResult r = tilepipe("run conf/default.yaml --stats-interval=" + bad);
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_NE(r.err.find("--stats-interval: must be a positive number of seconds, got '" + bad + "'"),
                  std::string::npos)
            << r.err;
    }
    const CommandResult r = tilepipe("run conf/default.yaml --stats-interval 1 --stats-out /nonexistent/dir/s.jsonl");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--stats-out /nonexistent/dir/s.jsonl: cannot write"), std::string::npos) << r.err;
}

TEST(StatsInterval, LinesThatCannotBeWrittenFailTheRunAfterItsReport) {
    // A full disk: the run goes on to its report, then says which lines were lost and exits 1.
    const CommandResult full = tilepipe("run conf/default.yaml --set synth.count=200k --quiet --stats-interval 10 --stats-out /dev/full");
    EXPECT_EQ(full.status, 1) << full.err;
    EXPECT_NE(full.out.find("delivered 200000"), std::string::npos) << full.out;
    EXPECT_NE(full.err.find("tilepipe: --stats-out /dev/full: cannot write line 1: No space left on device"), std::string::npos)
        << full.err;
    // The lines and the report in one file would overwrite each other: refused before the run.
    const std::string f = tmp_path("both.json");
    const CommandResult both = tilepipe("run conf/default.yaml --stats-interval 1 --stats-out " + f + " --json " + f);
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(both.err.find("name one file: give each its own"), std::string::npos) << both.err;
    EXPECT_FALSE(fs::exists(f)) << "nothing written";
}

}  // namespace
}  // namespace tp::test
