// PendingOutputs: the files an app's stages write, kept under temporary names until the whole
// app has started. A stage creates the file reserve() names instead of its own path; the
// runner calls commit() once every stage has opened and every channel exists, which renames
// each to its name, or drops the object when the start failed, which removes them. So a run
// that fails to start never truncates or replaces what an earlier run wrote.
//
// Thread-safe (a mutex: files are opened at start and, for per-port captures, on a port's
// first packet, never per packet).
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tp {

class PendingOutputs {
public:
    PendingOutputs() = default;
    ~PendingOutputs();  // removes every file not committed
    PendingOutputs(const PendingOutputs&) = delete;
    PendingOutputs& operator=(const PendingOutputs&) = delete;

    // The name to create in place of `path`: `.NAME.tilepipe-PID-N.part` in the same folder
    // (so the rename stays on one file system; beside the file a link names, for a link);
    // `path` itself once committed, and for a device or FIFO, which is written in place.
    std::string reserve(const std::string& path);
    // Renames every reserved file that was created to its name. Throws std::runtime_error
    // naming the first that cannot be renamed.
    void commit();

private:
    std::mutex lock_;
    struct File {
        std::string temp, path;
        int mode;  // permissions of the file it replaces; -1: a new file
    };
    std::vector<File> files_;
    bool committed_ = false;
};

// The name a stage creates for output `path` (declared with Stage: tilepipe/stage.hpp):
// reserved in `outputs` when the stage runs in an app (outputs != nullptr), `path` otherwise.
std::string output_name(PendingOutputs* outputs, const std::string& path);

}  // namespace tp
