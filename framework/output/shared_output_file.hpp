// SharedOutputFile: a text file several stage instances write to (a farm's workers naming the
// same path: flow exports, alerts). The first opener creates (truncates) it and writes its
// header, the last owner to let go closes it, and every write lands whole under a lock and is
// flushed, so lines from different workers never interleave and a reader sees them promptly.
// Writers batch their lines (per burst, per export period): a write is not a per-packet call.
// Every write and flush is checked: one the file refuses (disk full, I/O error) throws an error
// naming the file, which fails the writing node (and so the run) instead of truncating the
// file silently; the file is cut back to the end of the last whole write, so it ends with a
// whole line.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "framework/stage/pending_outputs.hpp"

namespace tp {

class SharedOutputFile {
public:
    // Another writer already has the file open in another format.
    struct FormatConflict : std::runtime_error {
        using std::runtime_error::runtime_error;
    };

    // The file at `path` for lines of `format` (e.g. "csv", "json"). Throws std::runtime_error
    // naming the path when it cannot be created, FormatConflict when another writer has it in
    // another format.
    // The file is created under the name `outputs` reserves (stage.hpp's StageEnv::outputs).
    static std::shared_ptr<SharedOutputFile> open(const std::string& path, PendingOutputs* outputs, const std::string& format,
                                                  const std::string& header = "");
    ~SharedOutputFile();
    SharedOutputFile(const SharedOutputFile&) = delete;
    SharedOutputFile& operator=(const SharedOutputFile&) = delete;

    // Writes `text` whole and flushes it; throws std::runtime_error naming the file when the
    // file refuses it (then, and for every later write).
    void write(const std::string& text);

private:
    SharedOutputFile(FILE* f, std::string path, std::string format)
        : f_(f), path_(std::move(path)), format_(std::move(format)) {}
    std::mutex lock_;
    FILE* f_;
    std::string path_;
    std::string format_;
    std::string error_;  // the first refusal, repeated to later writers
    uint64_t whole_ = 0;  // bytes of whole writes: where a refused write cuts the file back to
};

}  // namespace tp
