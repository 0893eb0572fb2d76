// Which plugin files tilepipe agrees to run: code is loaded only from a file, in a folder,
// that nobody but the user (or root) can change. A file or folder writable by its group or by
// others, or owned by another user, could have been replaced by someone else's code.
#pragma once

#include <sys/stat.h>

#include <string>

namespace tp {

// Empty when `path` (a file or a folder, links followed) is owned by the effective user or
// root and not writable by group or others; else why it is refused, naming it.
std::string untrusted_reason(const std::string& path);
// The same check on what fstat() said about `path` (the descriptor the loader then loads).
std::string untrusted_reason(const std::string& path, const struct stat& st);

}  // namespace tp
