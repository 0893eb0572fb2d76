// Test support: run a command line, capture its exit status, stdout and stderr.
#pragma once

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

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

// Runs `cmd` through /bin/sh with every regular file it writes held to `max_file_bytes`
// (RLIMIT_FSIZE, set in the child before exec): a write past that fails with EFBIG ("File too
// large") as one on a full disk fails with ENOSPC, partial first, without root or a file
// system of the test's own. SIGXFSZ is ignored there, so the write returns the error instead
// of killing the process. stdout and stderr are pipes, which the limit does not touch.
inline CommandResult run_command_with_file_limit(const std::string& cmd, uint64_t max_file_bytes) {
    CommandResult r;
    int out[2], err[2];
    if (pipe(out) != 0) return r;
    if (pipe(err) != 0) {
        close(out[0]), close(out[1]);
        return r;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        const rlimit lim{max_file_bytes, max_file_bytes};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(126);
        signal(SIGXFSZ, SIG_IGN);  // kept across exec
        dup2(out[1], 1), dup2(err[1], 2);
        close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    close(out[1]), close(err[1]);
    // Both pipes at once: a child blocked on a full stderr pipe would never close stdout.
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* to[2] = {&r.out, &r.err};
    for (int open_pipes = 2; open_pipes > 0 && pid > 0;) {
        if (poll(fds, 2, -1) < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[4096];
            const ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                to[i]->append(buf, static_cast<size_t>(n));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_pipes;
            }
        }
    }
    for (const pollfd& f : fds)
        if (f.fd >= 0) close(f.fd);
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) == pid) r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
