// What the tiles backend's tests share: a world of n unpinned ranks, and the error a run throws.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "tilepipe/mp.hpp"

namespace tp::mp::test {

// n ranks, not pinned (the tests run beside other work on few CPUs).
inline TilesOptions ranks(int n) {
    TilesOptions o;
    o.ranks = n;
    o.pin = false;
    return o;
}

// The message of the error run_tiles throws (empty if none).
inline std::string error_of(const TilesOptions& o, const std::function<void(Comm&)>& fn) {
    try {
        run_tiles(o, fn);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace tp::mp::test
