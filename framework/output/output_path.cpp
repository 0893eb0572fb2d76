#include "framework/output/output_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tp {

void check_output_path(const ParamValues& p, const std::string& name) {
    const std::string& path = p.get_string(name);
    if (path.empty()) return;
    // What open() would refuse with ENAMETOOLONG, refused here so that validate does too.
    if (const std::string file = std::filesystem::path(path).filename().string(); file.size() > NAME_MAX)
        p.fail(name, "cannot write '" + path.substr(0, 40) + "...': its file name is " + std::to_string(file.size()) +
                         " bytes, more than the " + std::to_string(NAME_MAX) + " a file system allows");
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        p.fail(name, "cannot write '" + path + "': it is a directory");
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    const std::string folder = parent.empty() ? "." : parent.string();
    if (::stat(folder.c_str(), &st) != 0) {
        const std::string error = std::strerror(errno);
        // Output paths are the working directory's: say which one, since it is not the config's.
        std::error_code ec;
        const std::string cwd = std::filesystem::current_path(ec).string();
        p.fail(name, "cannot write '" + path + "': folder '" + folder + "': " + error +
                         (std::filesystem::path(path).is_relative() && !ec ? " (relative to the working directory " + cwd + ")" : ""));
    }
    if (!S_ISDIR(st.st_mode)) p.fail(name, "cannot write '" + path + "': '" + folder + "' is not a folder");
    // An existing file must be writable itself; a new one needs a writable folder.
    const bool exists = ::access(path.c_str(), F_OK) == 0;
    if (::access(exists ? path.c_str() : folder.c_str(), W_OK) != 0)
        p.fail(name, "cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace tp
