#include "framework/runtime/idle_mode.hpp"

#include <limits>
#include <stdexcept>

namespace tp {

const std::vector<std::string>& idle_modes() {
    static const std::vector<std::string> modes{"auto", "spin", "park"};
    return modes;
}

IdleBackoff idle_backoff(const std::string& mode, bool shared_cpus) {
    IdleBackoff b;
    if (mode == "auto") {
        if (shared_cpus) b.spin_rounds = 0;  // a spin would burn the time slice another tile needs
    } else if (mode == "spin") {
        b.spin_rounds = std::numeric_limits<uint32_t>::max();  // the count wraps: spins for ever
        b.yield_rounds = 0;
    } else if (mode == "park") {
        b.spin_rounds = 0;
        b.yield_rounds = 0;
    } else {
        throw std::invalid_argument("unknown idle mode '" + mode + "'");
    }
    return b;
}

}  // namespace tp
