#include "framework/stage/pending_outputs.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tp {

namespace {
std::atomic<uint64_t> g_serial{0};  // distinct names for the outputs of every app in a process
}  // namespace

PendingOutputs::~PendingOutputs() {
    if (committed_) return;
    for (const auto& [temp, path] : files_) std::remove(temp.c_str());
}

std::string PendingOutputs::reserve(const std::string& path) {
    const std::lock_guard<std::mutex> g(lock_);
    if (committed_) return path;
    const std::filesystem::path p(path);
    const std::string temp = (p.parent_path() / ("." + p.filename().string() + ".tilepipe-" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(g_serial.fetch_add(1)) + ".part"))
                                 .string();
    files_.emplace_back(temp, path);
    return temp;
}

void PendingOutputs::commit() {
    const std::lock_guard<std::mutex> g(lock_);
    for (const auto& [temp, path] : files_) {
        if (::access(temp.c_str(), F_OK) != 0) continue;  // reserved, never created
        if (std::rename(temp.c_str(), path.c_str()) != 0) {
            const std::string error = std::strerror(errno);
            for (const auto& f : files_) std::remove(f.first.c_str());  // what was renamed already stays
            files_.clear();
            throw std::runtime_error("cannot write '" + path + "': " + error);
        }
    }
    files_.clear();
    committed_ = true;
}

}  // namespace tp
