#include "framework/plugin/plugin_loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

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

void load_plugin(const std::string& path, const Location& where) {
    const auto fail = [&](const std::string& why) { throw LocatedError(where, "plugin " + path + ": " + why); };
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    if (ec) fail(ec == std::errc::no_such_file_or_directory ? "does not exist" : ec.message());
    struct stat st {};
    if (::stat(real.c_str(), &st) != 0) fail(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) fail("is not a file (a plugin is a shared library, lib*.so)");
    for (const fs::path& p : {real, real.parent_path()})
        if (const std::string why = untrusted_reason(p.string()); !why.empty()) fail("refused: " + why);
    if (loaded_files().count({st.st_dev, st.st_ino}) != 0) return;

    std::vector<StageInfoBuilder> builders;
    void* handle = nullptr;
    {
        const CollectingBuilders collect(&builders);
        // RTLD_LOCAL: one plugin's symbols never satisfy another's. Never closed (see header).
        handle = ::dlopen(real.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (handle == nullptr) {
        const char* err = ::dlerror();
        fail(std::string("cannot be loaded as a shared library: ") + (err != nullptr ? err : "dlopen failed"));
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
        fail(e.what());
    }
    loaded_files().insert({st.st_dev, st.st_ino});
}

std::vector<std::string> default_plugin_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("TILEPIPE_PLUGIN_PATH"); env != nullptr) {
        const std::string list = env;
        for (size_t from = 0; from <= list.size();) {
            const size_t end = std::min(list.find(':', from), list.size());
            if (end > from) dirs.push_back(list.substr(from, end - from));
            from = end + 1;
        }
    }
    // The folder this code was loaded from: libtilepipe's, once installed (its <libdir>).
    Dl_info self {};
    if (::dladdr(reinterpret_cast<void*>(&default_plugin_dirs), &self) != 0 && self.dli_fname != nullptr)
        dirs.push_back((fs::path(self.dli_fname).parent_path() / "tilepipe" / "plugins").string());
    return dirs;
}

void load_plugins(const std::vector<std::string>& files) {
    for (const std::string& dir : default_plugin_dirs()) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) continue;
        const Location where{dir};
        if (const std::string why = untrusted_reason(dir); !why.empty())
            throw LocatedError(where, "plugin folder refused: " + why);
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
