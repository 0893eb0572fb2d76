// MetricsServer: a run's live figures over HTTP (`tilepipe run --metrics [ADDR:]PORT`), served
// by prometheus-cpp's Exposer (civetweb underneath):
//   /metrics     Prometheus text format 0.0.4, or OpenMetrics 1.0.0 when the scraper's Accept
//                header asks for it (prometheus_families.hpp lists the families)
//   /live.json   the run so far as JSON (live_json.hpp), what the live page reads
//   /            the live page (live_page.hpp): self-contained, nothing fetched from elsewhere
//
// Lifetime: made before EAL starts, so an address that cannot be had is a usage error before
// anything else; it answers with zeros until publish() gives it the run, from the run's
// counters while it lasts, from the final report once publish_final() got it, and stops when
// destroyed (after the report is printed).
//
// Threads: civetweb's worker threads build each answer from the published source with relaxed
// reads of the tiles' counters (live_view.hpp): no tile waits. A mutex guards what is published;
// a handler holds it while it reads, so publish() and the destructor return only once no
// handler still reads what they replace.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "framework/metrics/live_view.hpp"

namespace prometheus {
class Exposer;
}

namespace tp {

// Where --metrics listens: [ADDR:]PORT, ADDR an IPv4 address or `localhost` (127.0.0.1 when
// left out), PORT 0..65535 (0: one the kernel picks).
struct MetricsAddress {
    std::string host = "127.0.0.1";
    int port = 0;
    bool loopback = true;
    std::string str() const { return host + ":" + std::to_string(port); }
};

// Parses `text`; an address that is not a loopback one is refused unless `allow_public`.
// Returns the error (naming the option and the value), empty when `out` is set.
std::string parse_metrics_address(const std::string& text, bool allow_public, MetricsAddress& out);

class MetricsServer {
public:
    // Listens on `at` now; throws std::runtime_error (one line: the address and why) when it
    // cannot. `app` and `version` label the figures before the run is published.
    MetricsServer(const MetricsAddress& at, const std::string& app, const std::string& version);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    // The port it listens on (the kernel's pick when asked for 0).
    int port() const { return port_; }
    const std::string& host() const { return host_; }

    // Answers from `source` from now on (a running app's live_view).
    void publish(LiveSource source);
    // Answers from the finished run's report from now on (the source may go away after).
    void publish_final(const RunReport& report);

    // What a scrape or the page would get now (for the handlers).
    LiveView view() const;
    const std::string& version() const { return version_; }

private:
    class Collectable;
    mutable std::mutex m_;
    LiveSource source_;  // guarded by m_; empty: the figures before the run
    std::string app_, version_, host_;
    int port_ = 0;
    std::shared_ptr<Collectable> collectable_;
    std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace tp
