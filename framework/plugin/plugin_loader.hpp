// Plugins: shared libraries of stages built outside the tree (against the installed
// tilepipe.pc) and loaded at run time, after the command line is read and before an app's
// stages are looked up.
//
// A plugin defines its stages with TILEPIPE_STAGE and one entry point with TILEPIPE_PLUGIN
// (tilepipe/registration.hpp). Loading one: the file must exist and be trusted
// (plugin_trust.hpp), checked on the descriptor that is then loaded (/proc/self/fd/N), so no
// rename between check and load can swap it; dlopen (RTLD_NOW | RTLD_LOCAL) runs its registrars, which only note
// builders; its entry point's record must carry this tilepipe's TILEPIPE_ABI_VERSION; then its
// records are built and every name checked against the registry before any is added. Each
// failure is a LocatedError naming the file, and registers nothing of that plugin. Handles stay
// open for the life of the process: stages made from a plugin may live until exit.
//
// Not thread-safe against other loads or lookups: called from the thread that reads the
// command line and the config, before any tile runs.
#pragma once

#include <string>
#include <vector>

#include "tilepipe/error.hpp"

namespace tp {

// Loads the plugin at `path` (once per file: a second name for a loaded file does nothing).
// Errors are LocatedError(where, "plugin PATH: reason").
void load_plugin(const std::string& path, const Location& where);

// The folders whose *.so are loaded without being named: each of $TILEPIPE_PLUGIN_PATH
// (colon-separated), then `tilepipe/plugins` in the folder libtilepipe was loaded from (the
// install's <libdir>/tilepipe/plugins). Missing ones are skipped.
std::vector<std::string> default_plugin_dirs();

// Loads every *.so of the default folders (by name), then each of `files` (--plugin FILE).
// A $TILEPIPE_PLUGIN_PATH folder that is not trusted is refused like a plugin file; the
// installed folder, which nobody named, is skipped with a warning.
void load_plugins(const std::vector<std::string>& files);

}  // namespace tp
