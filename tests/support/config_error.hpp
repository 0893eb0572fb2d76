// Test support: what parse_app_config says about an app config (as file app.yaml).
#pragma once

#include <string>

#include "framework/config/app_config.hpp"

namespace tp::test {

// The LocatedError's `file:line:col: message`, or "no error".
inline std::string error_of(const std::string& yaml) {
    try {
        parse_app_config(yaml, "app.yaml");
    } catch (const LocatedError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace tp::test
