#include "framework/output/shared_output_file.hpp"

#include <stdio_ext.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

namespace tp {

std::shared_ptr<SharedOutputFile> SharedOutputFile::open(const std::string& path, PendingOutputs* outputs, const std::string& format,
                                                         const std::string& header) {
    static std::mutex registry_lock;
    static std::map<std::string, std::weak_ptr<SharedOutputFile>> registry;
    const std::lock_guard<std::mutex> g(registry_lock);
    if (auto existing = registry[path].lock()) {
        if (existing->format_ != format)
            throw FormatConflict("'" + path + "' is already written as " + existing->format_ + " by another stage");
        return existing;
    }
    FILE* f = std::fopen(output_name(outputs, path).c_str(), "w");
    if (f == nullptr) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
    auto file = std::shared_ptr<SharedOutputFile>(new SharedOutputFile(f, path, format));
    if (!header.empty()) file->write(header);
    registry[path] = file;
    return file;
}

SharedOutputFile::~SharedOutputFile() { std::fclose(f_); }

void SharedOutputFile::write(const std::string& text) {
    const std::lock_guard<std::mutex> g(lock_);
    if (error_.empty()) {
        if (std::fwrite(text.data(), 1, text.size(), f_) == text.size() && std::fflush(f_) == 0) {
            whole_ += text.size();
        } else {
            error_ = std::strerror(errno);
            // Part of `text` may have landed (a disk fills mid-line): cut the file back to the
            // last whole write, and drop what stdio still holds so closing writes nothing more.
            __fpurge(f_);
            if (ftruncate(fileno(f_), static_cast<off_t>(whole_)) != 0)
                error_ += std::string(" (and cutting it back to its last whole line failed: ") + std::strerror(errno) + ")";
        }
    }
    if (!error_.empty()) throw std::runtime_error("cannot write '" + path_ + "': " + error_);
}

}  // namespace tp
