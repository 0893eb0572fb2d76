// Test support: run a command line, capture its exit status, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tp::test {

struct CommandResult {
    int status = -1;  // exit code, or 128 + signal
    std::string out;
    std::string err;
};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

// Runs `cmd` through /bin/sh; stderr is captured through a temporary file.
inline CommandResult run_command(const std::string& cmd) {
    char err_path[] = "/tmp/tp-test-stderr-XXXXXX";
    const int fd = mkstemp(err_path);
    if (fd >= 0) close(fd);
    CommandResult r;
    FILE* p = popen((cmd + " 2>" + err_path).c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.err = read_file(err_path);
    std::remove(err_path);
    return r;
}

inline std::string tilepipe_bin() {
    const char* b = std::getenv("TILEPIPE_BIN");
    return b != nullptr ? b : "tilepipe";
}

// What tcpdump makes of a capture: packets printed, exit status, link type name.
struct TcpdumpView {
    long packets = 0;
    int status = -1;
    std::string link_type;  // e.g. "EN10MB"
};

inline TcpdumpView tcpdump_view(const std::string& file) {
    TcpdumpView v;
    // -# numbers each packet: some dissectors print several lines for one packet.
    const CommandResult r = run_command("tcpdump -#nr '" + file + "'");
    v.status = r.status;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        const auto digits = line.find_first_not_of(' ');
        if (digits != std::string::npos && std::isdigit(static_cast<unsigned char>(line[digits])) &&
            line.find("  ", digits) == line.find_first_not_of("0123456789", digits))
            ++v.packets;
    }
    const auto at = r.err.find("link-type ");
    if (at != std::string::npos) {
        const auto end = r.err.find(' ', at + 10);
        v.link_type = r.err.substr(at + 10, end - at - 10);
    }
    return v;
}

}  // namespace tp::test
