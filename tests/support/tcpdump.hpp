// Test support: what tcpdump (installed by scripts/bootstrap.sh) makes of a capture, the
// reference the apps' outputs are compared with.
#pragma once

#include <string>

#include "tests/support/process.hpp"

namespace tp::test {

// Packets `tcpdump -r FILE --count EXPR` counts; -1 when it cannot read the file.
inline long tcpdump_count(const std::string& file, const std::string& expr) {
    const CommandResult r = run_command("tcpdump -n -r '" + file + "' --count '" + expr + "' 2>/dev/null");
    if (r.status != 0) return -1;
    return std::stol(r.out);  // "N packets"
}

}  // namespace tp::test
