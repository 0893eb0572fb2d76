#include "framework/plugin/plugin_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tp {

std::string untrusted_reason(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno);
    return untrusted_reason(path, st);
}

std::string untrusted_reason(const std::string& path, const struct stat& st) {
    const char* what = S_ISDIR(st.st_mode) ? "folder " : "";
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
        return std::string(what) + path + " is owned by uid " + std::to_string(st.st_uid) +
               ", neither you nor root: tilepipe loads plugins only from files and folders you or root own";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return std::string(what) + path + " is writable by " + ((st.st_mode & S_IWOTH) != 0 ? "others" : "its group") +
               ": tilepipe loads plugins only from files and folders no one else can change (chmod go-w)";
    return "";
}

}  // namespace tp
