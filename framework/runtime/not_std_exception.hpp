// What an error report says for an exception that is not a std::exception (`throw 42;`): it
// carries no message, so the report names only where it came from (a node, a stage, a worker).
#pragma once

namespace tp {

inline constexpr const char* kNotStdException = "an exception that is not a std::exception";

}  // namespace tp
