// The lines of a text file a user named for a stage (rules, routes, patterns), read with
// bounds: a device or a binary file given by mistake (/dev/zero, /dev/urandom, a capture) is
// refused at its first line instead of filling memory or never ending.
#pragma once

#include <string>
#include <vector>

#include "framework/config/location.hpp"

namespace tp {

// Bounds on such a file: far above a real one (65,536 routes are ~2 MB).
inline constexpr size_t kMaxTextFileBytes = size_t{64} << 20;
inline constexpr size_t kMaxTextLineBytes = size_t{1} << 20;
inline constexpr size_t kMaxTextLines = size_t{1} << 22;  // a file of newlines must not be 64 M strings

// Every line of `path` (without its newline), in order. What cannot be read is a LocatedError
// at `named_at`; a NUL byte or a line over kMaxTextLineBytes at its `path:line`; a file over
// kMaxTextFileBytes or kMaxTextLines at `path`. `what` names the kind of file in the messages ("rules").
std::vector<std::string> read_text_lines(const std::string& path, const Location& named_at, const std::string& what);

}  // namespace tp
