// Test support: one HTTP/1.0 GET to 127.0.0.1:PORT, as a scraper makes it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

namespace tp::test {

struct HttpReply {
    bool connected = false;  // false: nothing listens there
    int status = 0;
    std::string headers, body;
    // A header's value ("" when absent); `name` as the server spells it.
    std::string header(const std::string& name) const {
        const size_t at = headers.find(name + ": ");
        if (at == std::string::npos) return "";
        const size_t from = at + name.size() + 2;
        return headers.substr(from, headers.find("\r\n", from) - from);
    }
};

inline HttpReply http_get(int port, const std::string& path, const std::string& accept = "") {
    HttpReply r;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    const timeval patience{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return r;
    }
    r.connected = true;
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n";
    if (!accept.empty()) req += "Accept: " + accept + "\r\n";
    req += "\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        close(fd);
        return r;
    }
    std::string all;
    char buf[8192];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
    close(fd);
    const size_t end = all.find("\r\n\r\n");
    if (all.compare(0, 5, "HTTP/") != 0 || end == std::string::npos) return r;
    r.status = std::stoi(all.substr(all.find(' ') + 1, 3));
    r.headers = all.substr(0, end + 2);
    r.body = all.substr(end + 4);
    return r;
}

}  // namespace tp::test
