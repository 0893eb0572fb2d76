// TelemetryClient: a client of DPDK's telemetry socket, speaking its protocol as dpdk-telemetry.py
// does: a SOCK_SEQPACKET unix socket; on connect the server sends one JSON greeting
// {"version", "pid", "max_output_len"}; each command sent ("/path" or "/path,params") gets
// one JSON reply {"/path": value}. `tilepipe watch` reads a run through it, and so do the tests.
// A reply that takes over 5 s counts as a failed exchange: a reader never hangs on a stuck peer.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tp {

class TelemetryClient {
public:
    // Connects to `path`; connected() says whether it worked.
    explicit TelemetryClient(const std::string& path) {
        fd_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        const timeval patience{5, 0};
        if (fd_ >= 0) setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
        if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
        greeting_ = receive(1024);
        // DPDK's is 16 KiB; anything else that is not a sane size is not DPDK's greeting.
        if (greeting_.is_object() && greeting_.contains("max_output_len") && greeting_["max_output_len"].is_number_unsigned() &&
            greeting_["max_output_len"].get<uint64_t>() - 1 < kMaxReply)
            max_len_ = greeting_["max_output_len"].get<size_t>();
    }
    ~TelemetryClient() {
        if (fd_ >= 0) ::close(fd_);
    }
    TelemetryClient(const TelemetryClient&) = delete;
    TelemetryClient& operator=(const TelemetryClient&) = delete;

    bool connected() const { return max_len_ != 0; }
    // The last exchange that failed: the peer closed the socket (a run that ended), or why not.
    bool closed() const { return closed_; }
    const std::string& failure() const { return failure_; }
    const nlohmann::json& greeting() const { return greeting_; }

    // The reply's value for `command` (its path without parameters is the reply's key); a
    // discarded value when the exchange failed.
    nlohmann::json query(const std::string& command) {
        if (::send(fd_, command.data(), command.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(command.size())) {
            closed_ = true;
            failure_ = "the socket closed";
            return nlohmann::json::value_t::discarded;
        }
        const nlohmann::json reply = receive(max_len_);
        if (reply.is_discarded()) return reply;
        const std::string key = command.substr(0, command.find(','));
        if (!reply.is_object() || !reply.contains(key)) {
            failure_ = "its reply to " + key + " holds no '" + key + "'";
            return nlohmann::json::value_t::discarded;
        }
        return reply[key];
    }

private:
    static constexpr uint64_t kMaxReply = 1 << 24;

    nlohmann::json receive(size_t max) {
        std::vector<char> buf(max);
        const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
        if (n < 0 && errno == EINTR) {  // a signal (watch's Ctrl-C): the socket is still there
            failure_ = "interrupted";
            return nlohmann::json::value_t::discarded;
        }
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            closed_ = true;
            failure_ = "the socket closed";
            return nlohmann::json::value_t::discarded;
        }
        if (n < 0) {
            failure_ = "no reply within 5 s";
            return nlohmann::json::value_t::discarded;
        }
        nlohmann::json j = nlohmann::json::parse(std::string(buf.data(), static_cast<size_t>(n)), nullptr, false);
        if (j.is_discarded()) failure_ = "a reply that is not JSON";
        return j;
    }

    int fd_ = -1;
    size_t max_len_ = 0;
    nlohmann::json greeting_;
    bool closed_ = false;
    std::string failure_;
};

}  // namespace tp
