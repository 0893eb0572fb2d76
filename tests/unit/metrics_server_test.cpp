// MetricsServer (`tilepipe run --metrics`): [ADDR:]PORT read as documented, loopback unless
// told otherwise; scrapes from several threads while the run is published, replaced by its
// final report and unpublished always answer whole (run under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "framework/metrics/metrics_server.hpp"
#include "framework/metrics/prometheus_families.hpp"
#include "tests/support/http_get.hpp"

namespace tp {
namespace {

using test::http_get;

TEST(MetricsAddress, PortAloneIsLoopbackAndAnOpenAddressNeedsToBeAllowed) {
    MetricsAddress a;
    EXPECT_EQ(parse_metrics_address("9464", false, a), "");
    EXPECT_EQ(a.str(), "127.0.0.1:9464");
    EXPECT_TRUE(a.loopback);
    EXPECT_EQ(parse_metrics_address("localhost:0", false, a), "");
    EXPECT_EQ(a.str(), "127.0.0.1:0");
    EXPECT_EQ(parse_metrics_address("127.0.0.2:80", false, a), "");
    EXPECT_EQ(parse_metrics_address("10.1.2.3:9464", false, a),
              "--metrics 10.1.2.3:9464: 10.1.2.3 is not a loopback address: the run's figures would be open to the "
              "network; add --metrics-public to serve them there");
    EXPECT_EQ(parse_metrics_address("0.0.0.0:9464", true, a), "");
    EXPECT_FALSE(a.loopback);
    EXPECT_EQ(a.str(), "0.0.0.0:9464");
    for (const char* bad : {"", "65536", "-1", "94a", "host:9464", "1.2.3:80", "127.0.0.1:"})
        EXPECT_EQ(parse_metrics_address(bad, true, a).rfind(std::string("--metrics ") + bad + ": ", 0), 0u) << bad;
}

// A run's view with every count `n`.
LiveView view_of(uint64_t n, bool finished) {
    LiveView v;
    v.started = true;
    v.finished = finished;
    v.report.app = "t";
    v.report.packets = v.report.delivered = n;
    v.report.seconds = 1;
    StageReport s;
    s.name = s.stage = "drop";
    s.kind = "sink";
    s.in = s.out = n;
    v.report.stages.push_back(s);
    return v;
}

TEST(PrometheusFamilies, AWorkersSeriesCarryItsIndexAndDropsWithoutADeclaredReasonAreOther) {
    LiveView v = view_of(10, false);
    v.report.tiles = {TileReport{}, TileReport{}};
    v.report.tiles[1].worker = 2;
    StageReport w = v.report.stages[0];
    w.name = "fw.2/pass";
    w.node = 1;
    w.drops = 5;
    w.drop_reasons = {{"malformed", 3}};
    v.report.stages.push_back(w);
    v.report.stages[0].node = 0;
    std::map<std::string, std::map<std::string, double>> drops;  // node -> reason -> count
    bool worker_labelled = false, others_unlabelled = true;
    for (const prometheus::MetricFamily& f : prometheus_families(v, "0")) {
        for (const prometheus::ClientMetric& m : f.metric) {
            std::map<std::string, std::string> l;
            for (const auto& x : m.label) l[x.name] = x.value;
            if (f.name == "tilepipe_node_dropped_packets_total") drops[l["node"]][l["reason"]] = m.counter.value;
            if (f.name == "tilepipe_node_packets_total" && l["node"] == "fw.2/pass") worker_labelled = l["worker"] == "2";
            if (f.name == "tilepipe_node_packets_total" && l["node"] == "drop") others_unlabelled = l.count("worker") == 0;
        }
    }
    EXPECT_TRUE(worker_labelled);
    EXPECT_TRUE(others_unlabelled);
    EXPECT_EQ(drops["fw.2/pass"], (std::map<std::string, double>{{"malformed", 3}, {"other", 2}}));
    EXPECT_EQ(drops["drop"], (std::map<std::string, double>{{"other", 0}})) << "every node has a drops series";
}

TEST(MetricsServer, ScrapesFromSeveralThreadsAnswerWholeWhileThePublishedRunChanges) {
    MetricsAddress at;
    ASSERT_EQ(parse_metrics_address("0", false, at), "");
    MetricsServer server(at, "t", "0");
    ASSERT_GT(server.port(), 0);
    std::atomic<bool> stop{false};
    std::atomic<int> whole{0}, broken{0};
    std::vector<std::thread> scrapers;
    for (const char* path : {"/metrics", "/live.json"})
        scrapers.emplace_back([&, path] {
            while (!stop.load()) {
                const test::HttpReply r = http_get(server.port(), path);
                const bool ok = r.status == 200 && (path[1] == 'm' ? r.body.find("tilepipe_delivered_packets_total{app=\"t\"}") != std::string::npos
                                                                    : nlohmann::json::parse(r.body, nullptr, false).contains("state"));
                (ok ? whole : broken).fetch_add(1);
            }
        });
    std::atomic<uint64_t> counter{0};
    for (int i = 0; i < 200; ++i) {
        server.publish([&counter] { return view_of(counter.fetch_add(1), false); });
        if (i % 3 == 0) server.publish_final(view_of(7, true).report);
        if (i % 7 == 0) server.publish(nullptr);
    }
    server.publish_final(view_of(1234, true).report);
    while (whole.load() < 6) std::this_thread::yield();
    stop = true;
    for (std::thread& t : scrapers) t.join();
    EXPECT_EQ(broken.load(), 0);
    const test::HttpReply last = http_get(server.port(), "/metrics");
    EXPECT_NE(last.body.find("tilepipe_delivered_packets_total{app=\"t\"} 1234\n"), std::string::npos) << last.body;
    EXPECT_NE(last.body.find("tilepipe_run_finished{app=\"t\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace tp
