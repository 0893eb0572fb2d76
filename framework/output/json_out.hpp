// `--json OUT` for every command: OUT is a file, or `-` for standard output, with the
// command's human output (tables, maps) going to standard error instead so the JSON stays
// parseable (`tilepipe topo conf/x.yaml --json - | jq .`).
#pragma once

#include <string>

namespace tp {

// True for the `--json` value that means standard output.
inline bool json_to_stdout(const std::string& path) { return path == "-"; }

// For a command whose human output is written all over (the benches): from now on what goes
// to standard output goes to standard error, and write_json_text("-") writes to the
// standard output the process started with. Call once, before any output.
void divert_stdout_to_stderr();

// Writes `text` to `path` (standard output for "-"); throws std::runtime_error naming the
// option that gave the path, the path and the reason on failure. No-op for an empty path.
void write_json_text(const std::string& path, const std::string& text, const std::string& option = "--json");

}  // namespace tp
