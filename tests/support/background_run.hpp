// Test support: `tilepipe run ARGS` in the background, from the source root, its stderr to a
// file (and its stdout too, unless the test hands it a descriptor of its own); stop() is Ctrl-C.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/support/cli.hpp"

namespace tp::test {

// How long a background run may take to get somewhere: a loaded machine, not a timing check.
inline constexpr auto kPatience = std::chrono::seconds(120);

class BackgroundRun {
public:
    // `stdout_fd` >= 0: the run's stdout (the test keeps its own copy).
    explicit BackgroundRun(const std::string& args, int stdout_fd = -1) {
        pid_ = fork();
        if (pid_ == 0) {
            std::string cmd = "cd '" + source_root() + "' && exec '" + tilepipe_bin() + "' run " + args + " 2>" + err_;
            if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
            else cmd += " >" + out_;
            execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    ~BackgroundRun() {
        if (pid_ > 0 && status_ < 0) stop();
        std::filesystem::remove(out_);
        std::filesystem::remove(err_);
    }
    pid_t pid() const { return pid_; }
    bool alive() const { return pid_ > 0 && status_ < 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
    // SIGINT, then the exit status (128 + signal when killed).
    int stop() {
        kill(pid_, SIGINT);
        return wait();
    }
    // Waits for the run to end; its exit status.
    int wait() {
        if (status_ >= 0) return status_;
        int st = 0;
        waitpid(pid_, &st, 0);
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
    }
    std::string err() const { return read_file(err_); }

private:
    pid_t pid_ = -1;
    int status_ = -1;
    std::string out_ = tmp_path("bg.out"), err_ = tmp_path("bg.err");
};

}  // namespace tp::test
