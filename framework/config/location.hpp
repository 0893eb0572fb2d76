// Location and LocatedError: where a piece of user input came from, and the one error type
// the edges (config, files, CLI) throw. what() is already formatted as `place: message`.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tp {

struct Location {
    std::string file;   // config file, capture, rules file, or "<command line>"
    int line = 0;       // 1-based; 0 = unknown
    int column = 0;     // 1-based; 0 = unknown

    std::string str() const;  // "file:line:col", "file:line" or "file"
};

class LocatedError : public std::runtime_error {
public:
    LocatedError(const Location& where, const std::string& message)
        : std::runtime_error(where.str() + ": " + message), where_(where), message_(message) {}
    const Location& where() const { return where_; }
    const std::string& message() const { return message_; }

private:
    Location where_;
    std::string message_;
};

}  // namespace tp
