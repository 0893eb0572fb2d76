#include "framework/output/json_out.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tp {

namespace {
int json_fd = STDOUT_FILENO;  // where "-" writes: the process's standard output
}

void divert_stdout_to_stderr() {
    std::fflush(stdout);
    const int saved = ::dup(STDOUT_FILENO);
    if (saved < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        throw std::runtime_error(std::string("--json -: cannot set standard output aside: ") + std::strerror(errno));
    json_fd = saved;
}

void write_json_text(const std::string& path, const std::string& text, const std::string& option) {
    if (path.empty()) return;
    if (json_to_stdout(path)) {
        std::fflush(stdout);
        for (size_t at = 0; at < text.size();) {
            const ssize_t n = ::write(json_fd, text.data() + at, text.size() - at);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error(option + " -: cannot write to standard output: " + std::strerror(errno));
            at += static_cast<size_t>(n);
        }
        return;
    }
    std::ofstream out(path);
    if (!(out << text) || !(out.flush()))
        throw std::runtime_error(option + " " + path + ": cannot write: " + std::strerror(errno));
}

}  // namespace tp
