#include "framework/stage/pending_outputs.hpp"

#include <sys/stat.h>
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
    for (const File& f : files_) std::remove(f.temp.c_str());
}

std::string PendingOutputs::reserve(const std::string& path) {
    const std::lock_guard<std::mutex> g(lock_);
    if (committed_) return path;
    // Only a regular file (or none yet) is replaced by a rename; a link is followed to the file
    // it names. A device, a FIFO or a link to one (/dev/full, /dev/stdout) is written in place:
    // renaming onto it would replace the device, and writing it destroys nothing.
    std::string target = path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        std::error_code ec;
        target = std::filesystem::canonical(path, ec).string();
        if (ec) return path;  // a dangling link: left to the stage's own open and error
        if (::stat(target.c_str(), &st) != 0) return path;
    } else if (::lstat(path.c_str(), &st) != 0) {
        st.st_mode = 0;  // a new file
    }
    if (st.st_mode != 0 && !S_ISREG(st.st_mode)) return path;
    const std::filesystem::path p(target);
    const std::string temp = (p.parent_path() / ("." + p.filename().string() + ".tilepipe-" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(g_serial.fetch_add(1)) + ".part"))
                                 .string();
    files_.push_back(File{temp, target, st.st_mode != 0 ? static_cast<int>(st.st_mode & 07777) : -1});
    return temp;
}

void PendingOutputs::commit() {
    const std::lock_guard<std::mutex> g(lock_);
    for (const File& f : files_) {
        if (::access(f.temp.c_str(), F_OK) != 0) continue;  // reserved, never created
        if (f.mode >= 0) ::chmod(f.temp.c_str(), static_cast<mode_t>(f.mode));  // the replaced file's permissions
        if (std::rename(f.temp.c_str(), f.path.c_str()) != 0) {
            const std::string error = std::strerror(errno);
            for (const File& o : files_) std::remove(o.temp.c_str());  // what was renamed already stays
            files_.clear();
            throw std::runtime_error("cannot write '" + f.path + "': " + error);
        }
    }
    files_.clear();
    committed_ = true;
}

std::string output_name(PendingOutputs* outputs, const std::string& path) {
    return outputs != nullptr ? outputs->reserve(path) : path;
}

}  // namespace tp
