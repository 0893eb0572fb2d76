#include "framework/plugin/plugin_loader.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <spdlog/spdlog.h>
#include <utility>

#include "framework/plugin/elf_extent.hpp"
#include "framework/plugin/plugin_trust.hpp"
#include "framework/stage/registry.hpp"
#include "tilepipe/version.hpp"

namespace tp {

namespace {

namespace fs = std::filesystem;

// Files loaded so far, by device and inode: the same plugin under two names loads once.
std::set<std::pair<dev_t, ino_t>>& loaded_files() {
    static std::set<std::pair<dev_t, ino_t>> files;
    return files;
}

// Files refused after dlopen ran (a taken stage name...), by device and inode, with why: a
// second attempt finds the library already mapped, its registrars already run, and would
// otherwise report "registers no stage" instead of the real reason.
std::map<std::pair<dev_t, ino_t>, std::string>& refused_files() {
    static std::map<std::pair<dev_t, ino_t>, std::string> files;
    return files;
}

// A descriptor that is closed when it goes.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }
    // Keeps the descriptor open for the life of the process: dlopen knows a library loaded
    // through /proc/self/fd/N by that name, so the number must never name another file.
    void keep() { fd_ = -1; }

private:
    int fd_;
};

// Sets the registry's collector for the plugin being opened, and always clears it.
class CollectingBuilders {
public:
    explicit CollectingBuilders(std::vector<StageInfoBuilder>* into) { collect_stage_builders(into); }
    ~CollectingBuilders() { collect_stage_builders(nullptr); }
    CollectingBuilders(const CollectingBuilders&) = delete;
    CollectingBuilders& operator=(const CollectingBuilders&) = delete;
};

std::vector<StageInfo> build_records(const std::vector<StageInfoBuilder>& builders, const std::string& origin) {
    std::vector<StageInfo> infos;
    for (StageInfoBuilder build : builders) {
        infos.push_back(build());
        infos.back().origin = origin;
    }
    return infos;
}

}  // namespace

namespace {
std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }
}  // namespace

void load_plugin(const std::string& path, const Location& where) {
    const auto fail = [&](const std::string& why) { throw LocatedError(where, "plugin " + path + ": " + why); };
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    if (ec) fail(ec == std::errc::no_such_file_or_directory ? "does not exist" : ec.message());
    // The file is checked through the descriptor it is then loaded from (/proc/self/fd/N), so
    // what runs is the inode that passed the checks, whatever is renamed in between.
    FileDescriptor fd(::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (fd.get() < 0) fail(std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) fail("is not a file (a plugin is a shared library, lib*.so)");
    if (const std::string why = untrusted_reason(real.string(), st); !why.empty()) fail("refused: " + why);
    if (const std::string why = untrusted_reason(real.parent_path().string()); !why.empty()) fail("refused: " + why);
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    if (loaded_files().count(id) != 0) return;
    if (auto it = refused_files().find(id); it != refused_files().end()) fail(it->second);
    if (const std::string why = elf_cut_short(fd.get(), st.st_size); !why.empty()) fail(why);

    std::vector<StageInfoBuilder> builders;
    void* handle = nullptr;
    {
        const CollectingBuilders collect(&builders);
        // RTLD_LOCAL: one plugin's symbols never satisfy another's. Never closed (see header).
        handle = ::dlopen(fd_path(fd.get()).c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (handle != nullptr) fd.keep();
    if (handle == nullptr) {
        const char* err = ::dlerror();
        // dlopen names the descriptor's path: the user knows the file by its own name.
        std::string why = err != nullptr ? err : "dlopen failed";
        const std::string by_fd = fd_path(fd.get());
        for (size_t at = why.find(by_fd); at != std::string::npos; at = why.find(by_fd, at + path.size()))
            why.replace(at, by_fd.size(), path);
        fail("cannot be loaded as a shared library: " + why);
    }
    using Entry = const PluginRecord* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, TILEPIPE_PLUGIN_ENTRY));
    if (entry == nullptr)
        fail("has no registration entry point '" TILEPIPE_PLUGIN_ENTRY
             "' (a plugin defines it with TILEPIPE_PLUGIN(), tilepipe/registration.hpp)");
    const PluginRecord* record = entry();
    if (record == nullptr) fail("its entry point '" TILEPIPE_PLUGIN_ENTRY "' returned no record");
    if (record->abi_version != TILEPIPE_ABI_VERSION) {
        // Only the first member is read from a plugin of another version: its layout is fixed.
        fail("was built for stage ABI version " + std::to_string(record->abi_version) + ", but this tilepipe (" +
             TILEPIPE_VERSION_STRING + ") has stage ABI version " + std::to_string(TILEPIPE_ABI_VERSION) +
             ": rebuild the plugin against this tilepipe's headers (pkg-config tilepipe)");
    }
    if (builders.empty()) fail("registers no stage (define its stages with TILEPIPE_STAGE)");
    std::vector<StageInfo> infos;
    try {
        infos = build_records(builders, real.string());
        StageRegistry::instance().add_all(std::move(infos));
    } catch (const std::exception& e) {
        refused_files().emplace(id, e.what());
        fail(e.what());
    }
    loaded_files().insert(id);
}

namespace {
struct PluginDir {
    std::string path;
    bool named;  // by the user ($TILEPIPE_PLUGIN_PATH), not the installed default
};

std::vector<PluginDir> plugin_dirs() {
    std::vector<PluginDir> dirs;
    if (const char* env = std::getenv("TILEPIPE_PLUGIN_PATH"); env != nullptr) {
        const std::string list = env;
        for (size_t from = 0; from <= list.size();) {
            const size_t end = std::min(list.find(':', from), list.size());
            if (end > from) dirs.push_back({list.substr(from, end - from), true});
            from = end + 1;
        }
    }
    // The folder this code was loaded from: libtilepipe's, once installed (its <libdir>).
    Dl_info self {};
    if (::dladdr(reinterpret_cast<void*>(&plugin_dirs), &self) != 0 && self.dli_fname != nullptr)
        dirs.push_back({(fs::path(self.dli_fname).parent_path() / "tilepipe" / "plugins").string(), false});
    return dirs;
}
}  // namespace

std::vector<std::string> default_plugin_dirs() {
    std::vector<std::string> dirs;
    for (const PluginDir& d : plugin_dirs()) dirs.push_back(d.path);
    return dirs;
}

void load_plugins(const std::vector<std::string>& files) {
    for (const auto& [dir, named] : plugin_dirs()) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) continue;
        const Location where{dir};
        if (const std::string why = untrusted_reason(dir); !why.empty()) {
            // A folder the user named ($TILEPIPE_PLUGIN_PATH) is an error; the installed default,
            // which nobody named, is passed over so that an install with a loose umask still runs.
            if (named) throw LocatedError(where, "plugin folder refused: " + why);
            spdlog::warn("plugin folder {} skipped: {}", dir, why);
            continue;
        }
        std::vector<std::string> found;
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".so") found.push_back(e.path().string());
        if (ec) throw LocatedError(where, "cannot list the plugin folder: " + ec.message());
        std::sort(found.begin(), found.end());
        for (const std::string& f : found) load_plugin(f, where);
    }
    for (const std::string& f : files) load_plugin(f, Location{"--plugin"});
}

}  // namespace tp
