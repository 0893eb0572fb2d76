#include "framework/metrics/metrics_server.hpp"

#include <CivetServer.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "framework/metrics/live_json.hpp"
#include "framework/metrics/live_page.hpp"
#include "framework/metrics/openmetrics_text.hpp"
#include "framework/metrics/prometheus_families.hpp"

namespace tp {

std::string parse_metrics_address(const std::string& text, bool allow_public, MetricsAddress& out) {
    const std::string what = "--metrics " + text + ": ";
    const size_t colon = text.rfind(':');
    const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
        return what + "the port must be a number from 0 to 65535 ([ADDR:]PORT, e.g. 9464 or 127.0.0.1:9464)";
    MetricsAddress a;
    a.port = std::stoi(port);
    if (colon != std::string::npos) a.host = host == "localhost" ? "127.0.0.1" : host;
    in_addr ip{};
    if (inet_pton(AF_INET, a.host.c_str(), &ip) != 1)
        return what + "'" + host + "' is not an IPv4 address or localhost";
    a.loopback = (ntohl(ip.s_addr) >> 24) == 127;
    if (!a.loopback && !allow_public)
        return what + a.host + " is not a loopback address: the run's figures would be open to the network; "
               "add --metrics-public to serve them there";
    out = a;
    return "";
}

// prometheus-cpp asks this for the families at each text-format scrape of /metrics.
class MetricsServer::Collectable : public prometheus::Collectable {
public:
    explicit Collectable(const MetricsServer& s) : server_(s) {}
    std::vector<prometheus::MetricFamily> Collect() const override {
        return prometheus_families(server_.view(), server_.version());
    }

private:
    const MetricsServer& server_;
};

namespace {

// civetweb's callbacks carry no pointer of ours: the one server of the process is here, set
// before its Exposer starts and cleared after it stopped (no callback runs outside that).
std::atomic<const MetricsServer*> g_server{nullptr};
std::mutex g_log_mutex;
std::string g_last_log;  // civetweb's last message (why a bind failed)

int log_message(const mg_connection*, const char* message) {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_last_log = message != nullptr ? message : "";
    spdlog::debug("metrics server: {}", g_last_log);
    return 1;  // not on stderr: the caller reports what matters once
}

// Why binding `at` fails (strerror), empty when it does not.
std::string bind_problem(const MetricsAddress& at) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return std::strerror(errno);
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // as civetweb binds
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(at.port));
    inet_pton(AF_INET, at.host.c_str(), &a.sin_addr);
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    const std::string why = bound ? "" : std::strerror(errno);
    close(fd);
    return why;
}

int reply(mg_connection* conn, const char* type, const std::string& body) {
    mg_printf(conn,
              "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
              "Connection: close\r\n\r\n",
              type, body.size());
    if (std::strcmp(mg_get_request_info(conn)->request_method, "HEAD") != 0) mg_write(conn, body.data(), body.size());
    return 200;
}

// The page, its JSON and OpenMetrics; 0 leaves the rest to civetweb (text /metrics, 404s).
int begin_request(mg_connection* conn) {
    const MetricsServer* s = g_server.load(std::memory_order_acquire);
    const mg_request_info* req = mg_get_request_info(conn);
    if (s == nullptr || req->local_uri == nullptr) return 0;
    const std::string uri = req->local_uri;
    if (uri == "/" || uri == "/index.html") return reply(conn, "text/html; charset=utf-8", live_page_html());
    if (uri == "/live.json") return reply(conn, "application/json", live_json(s->view()).dump());
    if (uri == "/metrics" && accepts_openmetrics(mg_get_header(conn, "Accept")))
        return reply(conn, kOpenMetricsType, openmetrics_text(prometheus_families(s->view(), s->version())));
    return 0;
}

}  // namespace

MetricsServer::MetricsServer(const MetricsAddress& at, const std::string& app, const std::string& version)
    : app_(app), version_(version), host_(at.host) {
    if (g_server.load() != nullptr) throw std::runtime_error("--metrics: a metrics server already runs in this process");
    collectable_ = std::make_shared<Collectable>(*this);
    g_server.store(this, std::memory_order_release);
    static CivetCallbacks callbacks = [] {
        CivetCallbacks c;
        c.begin_request = begin_request;
        c.log_message = log_message;
        return c;
    }();
    try {
        exposer_ = std::make_unique<prometheus::Exposer>(
            std::vector<std::string>{"listening_ports", at.str(), "num_threads", "2", "request_timeout_ms", "10000"},
            &callbacks);
    } catch (const std::exception&) {
        g_server.store(nullptr);
        // civetweb's last words are "Failed to setup server ports": the system's reason is what
        // a user needs, so ask the system (a port in use, one below 1024 without the right).
        std::string why = bind_problem(at);
        if (why.empty()) {
            std::lock_guard<std::mutex> lock(g_log_mutex);
            why = g_last_log;
        }
        throw std::runtime_error("--metrics " + at.str() + ": cannot listen there" + (why.empty() ? "" : ": " + why));
    }
    exposer_->RegisterCollectable(collectable_);
    const std::vector<int> ports = exposer_->GetListeningPorts();
    port_ = ports.empty() ? at.port : ports.front();
}

MetricsServer::~MetricsServer() {
    exposer_.reset();  // stops civetweb: no handler runs after this
    g_server.store(nullptr, std::memory_order_release);
}

void MetricsServer::publish(LiveSource source) {
    std::lock_guard<std::mutex> lock(m_);
    source_ = std::move(source);
}

void MetricsServer::publish_final(const RunReport& report) {
    LiveView v;
    v.started = true;
    v.finished = true;
    v.report = report;
    v.queued.assign(report.channels.size(), 0);  // drained (or freed, in a run cut short) once the tiles are done
    std::lock_guard<std::mutex> lock(m_);
    source_ = [v] { return v; };
}

LiveView MetricsServer::view() const {
    std::lock_guard<std::mutex> lock(m_);
    if (source_) return source_();
    LiveView v;
    v.report.app = app_;
    return v;
}

}  // namespace tp
