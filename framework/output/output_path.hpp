// check_output_path: the config-time check of a file a stage will write (a capture, a flow
// export, an alert log), made before anything starts and without creating or touching the
// file, so a failed start never destroys what an earlier run wrote.
#pragma once

#include <string>

#include "framework/stage/param.hpp"

namespace tp {

// Fails at parameter `name` unless its path (when not empty) is not a directory and its
// folder exists and is writable by this process.
void check_output_path(const ParamValues& p, const std::string& name);

}  // namespace tp
