// `tilepipe run --metrics` as an operator uses it: Prometheus scrapes /metrics while the run
// lasts (text format, or OpenMetrics when asked), its totals at the end are the report's; a
// browser (Debian's chromium, headless) shows the live page with the figures /live.json gives
// (during the run, between two reads of it; at the end, equal); the server answers until the
// report is printed and is gone after; an address it cannot or should not have is a usage
// error before anything starts.
//
// To scrape a finished run before it exits, a test hands the run a stdout pipe it filled first:
// the run holds at printing its report (the server still answering) until the test reads it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/background_run.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/http_get.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

// A pipe already full: whoever writes to it blocks until the test reads.
struct HeldStdout {
    int fd[2] = {-1, -1};
    HeldStdout() {
        if (pipe2(fd, O_CLOEXEC) != 0) return;
        fcntl(fd[1], F_SETPIPE_SZ, 4096);
        fcntl(fd[1], F_SETFL, O_NONBLOCK);
        const std::string filler(4096, '.');
        while (write(fd[1], filler.data(), filler.size()) > 0) {
        }
        fcntl(fd[1], F_SETFL, 0);  // the run's writes block
    }
    // Once the run has its copy: the test's write end goes, so reading ends at the run's exit.
    void close_write() { close(fd[1]), fd[1] = -1; }
    // The run's writes then fail (EPIPE): a run still held ends instead of waiting for ever.
    void close_read() { close(fd[0]), fd[0] = -1; }
    std::string read_all() {
        std::string all;
        char buf[4096];
        for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
        return all;
    }
    ~HeldStdout() {
        for (int f : fd)
            if (f >= 0) close(f);
    }
};

// The port the run says it serves on (stderr: "metrics at http://127.0.0.1:PORT/metrics"); 0
// when it never said.
int served_port(const BackgroundRun& run) {
    const std::regex said("metrics at http://127\\.0\\.0\\.1:([0-9]+)/metrics");
    const auto deadline = clock::now() + kPatience;
    while (clock::now() < deadline) {
        std::smatch m;
        const std::string err = run.err();
        if (std::regex_search(err, m, said)) return std::stoi(m[1]);
        if (!run.alive()) return 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
}

// The value of the first sample of `name` carrying every label of `labels`; -1 when none does.
double sample(const std::string& text, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        const size_t end = line.find_first_of("{ ");
        if (line.compare(0, end, name) != 0 || end != name.size()) continue;
        const std::string set = line[end] == '{' ? line.substr(end, line.rfind('}') - end) : "";
        bool all = true;
        for (const auto& [k, v] : labels) all = all && set.find(k + "=\"" + v + "\"") != std::string::npos;
        if (all) return std::stod(line.substr(line.rfind(' ') + 1));
    }
    return -1;
}

// A run of the default app without end, held at its report (HeldStdout), serving on a port of
// the kernel's choice.
struct MetricsRun {
    HeldStdout held;
    std::string json = tmp_path("metrics.json");
    BackgroundRun run{"conf/default.yaml --set synth.count=0 --quiet --metrics 0 --json " + json, held.fd[1]};
    int port = 0;
    MetricsRun() {
        held.close_write();
        port = served_port(run);
    }
    ~MetricsRun() {
        held.close_read();  // before `run` waits for the run's end (a test that failed early)
        fs::remove(json);
    }
    // A scrape once the counters moved: the run is running.
    std::string scrape_running() {
        const auto deadline = clock::now() + kPatience;
        while (clock::now() < deadline) {
            const HttpReply r = http_get(port, "/metrics");
            if (r.status == 200 && sample(r.body, "tilepipe_delivered_packets_total") > 0) return r.body;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return "";
    }
    // Ctrl-C, then a scrape once every tile is done (the run then holds at its report).
    std::string stop_and_scrape_final() {
        kill(run.pid(), SIGINT);
        const auto deadline = clock::now() + kPatience;
        while (clock::now() < deadline) {
            const HttpReply r = http_get(port, "/metrics");
            if (r.status == 200 && sample(r.body, "tilepipe_run_finished") == 1) return r.body;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return "";
    }
    // Lets the run print its report and end; its exit status.
    int release() {
        held.read_all();
        return run.wait();
    }
};

TEST(Metrics, AScrapeDuringTheRunSeesItsCountersAndTheTotalsAtTheEndAreTheReports) {
    MetricsRun m;
    ASSERT_GT(m.port, 0) << m.run.err();
    const std::string running = m.scrape_running();
    ASSERT_FALSE(running.empty()) << m.run.err();
    const HttpReply text = http_get(m.port, "/metrics");
    EXPECT_EQ(text.header("Content-Type").rfind("text/plain", 0), 0u) << "the text format: " << text.headers;
    EXPECT_EQ(sample(running, "tilepipe_run_finished"), 0);
    EXPECT_GT(sample(running, "tilepipe_node_packets_total",
                     {{"app", "default"}, {"node", "parse"}, {"stage", "parse"}, {"kind", "processor"}, {"direction", "in"}}),
              0);
    EXPECT_TRUE(std::regex_search(running, std::regex("tilepipe_node_busy_ratio\\{app=\"default\",node=\"parse\",stage=\"parse\","
                                                       "kind=\"[a-z]+\",tile=\"[0-9]+,[0-9]+\",cpu=\"[0-9]+\"\\} ")))
        << running;
    EXPECT_GE(sample(running, "tilepipe_node_dropped_packets_total", {{"node", "parse"}}), 0);
    EXPECT_GE(sample(running, "tilepipe_link_capacity_items", {{"from", "synth"}, {"to", "parse"}}), 1);
    EXPECT_GE(sample(running, "tilepipe_latency_seconds_bucket", {{"le", "+Inf"}}), 1);
    EXPECT_GE(sample(running, "tilepipe_latency_p99_seconds"), sample(running, "tilepipe_latency_p50_seconds"));

    // The Grafana dashboard (examples/grafana) queries only families the server exposes (the
    // edge family: reserved for apps that branch).
    const std::string dashboard = read_file(source_root() + "/examples/grafana/tilepipe.json");
    ASSERT_FALSE(dashboard.empty());
    const std::regex family("tilepipe_[a-z0-9_]+");
    int queried = 0;
    for (std::sregex_iterator it(dashboard.begin(), dashboard.end(), family), e; it != e; ++it) {
        const std::string name = it->str();
        if (name == "tilepipe_edge_packets_total") continue;
        ++queried;
        EXPECT_NE(running.find("\n" + name), std::string::npos) << "the dashboard queries " << name;
    }
    EXPECT_GT(queried, 10);

    // OpenMetrics when the scraper asks for it, as Prometheus does.
    const HttpReply om = http_get(m.port, "/metrics", "application/openmetrics-text;version=1.0.0,text/plain;q=0.5");
    EXPECT_NE(om.header("Content-Type").find("application/openmetrics-text; version=1.0.0"), std::string::npos);
    EXPECT_NE(om.body.find("# TYPE tilepipe_node_packets counter\n"), std::string::npos) << "no _total in the family";
    EXPECT_GT(sample(om.body, "tilepipe_node_packets_total", {{"node", "drop"}, {"direction", "out"}}), 0);
    EXPECT_EQ(om.body.substr(om.body.size() - 6), "# EOF\n");

    const std::string final = m.stop_and_scrape_final();
    ASSERT_FALSE(final.empty()) << m.run.err();
    EXPECT_TRUE(http_get(m.port, "/metrics").connected) << "it answers until the report is printed";
    EXPECT_EQ(m.release(), 130) << m.run.err();
    EXPECT_FALSE(http_get(m.port, "/metrics").connected) << "then it stops";

    const nlohmann::json report = nlohmann::json::parse(read_file(m.json), nullptr, false);
    ASSERT_FALSE(report.is_discarded());
    EXPECT_EQ(sample(final, "tilepipe_offered_packets_total"), report["packets"].get<double>());
    EXPECT_EQ(sample(final, "tilepipe_offered_bytes_total"), report["bytes"].get<double>());
    EXPECT_EQ(sample(final, "tilepipe_delivered_packets_total"), report["delivered"].get<double>());
    EXPECT_EQ(sample(final, "tilepipe_dropped_packets_total"), report["drops"].get<double>());
    for (const auto& s : report["stages"]) {
        const std::string node = s["name"];
        EXPECT_EQ(sample(final, "tilepipe_node_packets_total", {{"node", node}, {"direction", "in"}}), s["in"].get<double>());
        EXPECT_EQ(sample(final, "tilepipe_node_packets_total", {{"node", node}, {"direction", "out"}}), s["out"].get<double>());
        EXPECT_EQ(sample(final, "tilepipe_node_bytes_total", {{"node", node}}), s["bytes"].get<double>());
    }
    ASSERT_FALSE(report["edges"].empty());
    for (const auto& e : report["edges"])
        EXPECT_EQ(sample(final, "tilepipe_edge_packets_total",
                         {{"from", e["from"].get<std::string>()}, {"output", e["output"].get<std::string>()}, {"to", e["to"].get<std::string>()}}),
                  e["packets"].get<double>());
    EXPECT_EQ(sample(final, "tilepipe_latency_seconds_count"), report["latency_us"]["samples"].get<double>());
    EXPECT_EQ(sample(final, "tilepipe_latency_seconds_bucket", {{"le", "+Inf"}}), report["latency_us"]["samples"].get<double>());
}

// Where chromium is: Debian's package, or none.
std::string chromium() {
    for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (fs::exists(p)) return p;
    return "";
}

// The text of the element with `id` in `dom` ("" when absent).
std::string text_of_id(const std::string& dom, const std::string& id) {
    std::smatch m;
    if (!std::regex_search(dom, m, std::regex("id=\"" + id + "\">([^<]*)<"))) return "";
    return m[1];
}

// The text of cell `cls` in the row of node `node`.
std::string cell(const std::string& dom, const std::string& node, const std::string& cls) {
    const size_t row = dom.find("<tr data-node=\"" + node + "\">");
    if (row == std::string::npos) return "";
    const std::string tr = dom.substr(row, dom.find("</tr>", row) - row);
    std::smatch m;
    if (!std::regex_search(tr, m, std::regex("class=\"" + cls + "\">([^<]*)<"))) return "";
    return m[1];
}

// A number the page shows; NaN when it shows none.
double shown(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    return end != text.c_str() && *end == '\0' ? v : std::nan("");
}

TEST(LivePage, ChromiumShowsTheFiguresTheJsonEndpointGives) {
    const std::string browser = chromium();
    if (browser.empty()) GTEST_SKIP() << "chromium is not installed";
    MetricsRun m;
    ASSERT_GT(m.port, 0) << m.run.err();
    ASSERT_FALSE(m.scrape_running().empty()) << m.run.err();
    const std::string profile = tmp_path("chromium");
    // The page as rendered (--virtual-time-budget: its script and its first reads run before the
    // DOM is dumped).
    const auto render = [&] {
        return run_command("'" + browser + "' --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                           profile + " --virtual-time-budget=3000 --dump-dom http://127.0.0.1:" + std::to_string(m.port) + "/");
    };
    const auto delivered = [&] {
        return nlohmann::json::parse(http_get(m.port, "/live.json").body, nullptr, false).value("delivered", uint64_t(0));
    };
    // While the run lasts the figures move: what the page shows lies between two reads of the
    // endpoint taken around it.
    const uint64_t before = delivered();
    const CommandResult running = render();
    const uint64_t after = delivered();
    ASSERT_EQ(running.status, 0) << running.err;
    EXPECT_EQ(text_of_id(running.out, "state"), "running") << running.out;
    const std::string shown_then = text_of_id(running.out, "delivered");
    ASSERT_FALSE(shown_then.empty()) << running.out;
    EXPECT_GE(std::stoull(shown_then), before);
    EXPECT_LE(std::stoull(shown_then), after);
    EXPECT_NE(running.out.find("<tr data-node=\"parse\">"), std::string::npos) << running.out;

    // The finished run's figures stay put: the page and the endpoint must show the same.
    ASSERT_FALSE(m.stop_and_scrape_final().empty()) << m.run.err();
    const nlohmann::json live = nlohmann::json::parse(http_get(m.port, "/live.json").body, nullptr, false);
    ASSERT_FALSE(live.is_discarded());
    const CommandResult page = render();
    fs::remove_all(profile);
    EXPECT_EQ(m.release(), 130) << m.run.err();
    ASSERT_EQ(page.status, 0) << page.err;
    const std::string& dom = page.out;
    EXPECT_EQ(text_of_id(dom, "app"), "default") << dom;
    EXPECT_EQ(text_of_id(dom, "state"), "done");
    EXPECT_EQ(text_of_id(dom, "delivered"), std::to_string(live["delivered"].get<uint64_t>()));
    EXPECT_EQ(text_of_id(dom, "offered"), std::to_string(live["packets"].get<uint64_t>()));
    // Rounded figures: equal to the last digit shown (a tie may round either way).
    EXPECT_NEAR(shown(text_of_id(dom, "p99")), live["latency_us"]["p99"].get<double>(), 0.005 + 1e-9);
    EXPECT_NEAR(shown(text_of_id(dom, "mpps")), live["mpps"].get<double>(), 0.0005 + 1e-9) << "a finished run: its average";
    const double seconds = live["seconds"].get<double>();
    for (const auto& s : live["stages"]) {
        const std::string node = s["name"];
        EXPECT_EQ(cell(dom, node, "out"), std::to_string(s["out"].get<uint64_t>())) << node;
        EXPECT_NEAR(shown(cell(dom, node, "rate")), s["out"].get<double>() / seconds / 1e6, 0.0005 + 1e-9) << node;
        EXPECT_NEAR(shown(cell(dom, node, "busy")), s["busy_fraction"].get<double>() * 100, 0.05 + 1e-9) << node;
        EXPECT_NE(dom.find(">" + node + "</text>"), std::string::npos) << node << " drawn on its tile";
    }
}

TEST(Metrics, AnAddressInUseOrNotLocalIsAUsageErrorBeforeAnythingStarts) {
    // A port this test holds.
    const int held = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(held, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(held, 1), 0);
    socklen_t len = sizeof a;
    getsockname(held, reinterpret_cast<sockaddr*>(&a), &len);
    const std::string port = std::to_string(ntohs(a.sin_port));
    const CommandResult in_use = tilepipe("run conf/default.yaml --metrics " + port);
    close(held);
    EXPECT_EQ(in_use.status, 2);
    EXPECT_EQ(in_use.err, "tilepipe: --metrics 127.0.0.1:" + port + ": cannot listen there: Address already in use\n")
        << "one line, before EAL says anything";
    EXPECT_EQ(in_use.out, "");

    const CommandResult open = tilepipe("run conf/default.yaml --metrics 0.0.0.0:9464");
    EXPECT_EQ(open.status, 2);
    EXPECT_EQ(open.err, "tilepipe: --metrics 0.0.0.0:9464: 0.0.0.0 is not a loopback address: the run's figures would "
                        "be open to the network; add --metrics-public to serve them there\n");
    for (const std::string bad : {"70000", "abc", "1.2.3:80", ":"}) {
        const CommandResult r = tilepipe("run conf/default.yaml --metrics " + bad);
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_EQ(r.err.rfind("tilepipe: --metrics " + bad + ": ", 0), 0u) << r.err;
    }
    // Named explicitly, a public address is served.
    const CommandResult pub = tilepipe("run conf/default.yaml --set synth.count=1000 --quiet --metrics 0.0.0.0:0 --metrics-public");
    EXPECT_EQ(pub.status, 0) << pub.err;
    EXPECT_NE(pub.err.find("tilepipe: metrics at http://0.0.0.0:"), std::string::npos) << pub.err;
}

}  // namespace
}  // namespace tp::test
