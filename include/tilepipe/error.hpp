/// @file
/// Where a piece of user input came from, and the one error type tilepipe's edges (config,
/// files, command line) throw. A stage throws LocatedError from its constructor or open() to
/// point at the parameter that caused a problem (ParamValues::fail does that for it).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tp {

/// A place in the user's input.
struct Location {
    std::string file;   ///< config file, capture, rules file, or "<command line>"
    int line = 0;       ///< 1-based; 0 = unknown
    int column = 0;     ///< 1-based; 0 = unknown

    /// "file:line:col", "file:line" or "file", as much as is known.
    std::string str() const;
};

/// An error in the user's input, with its place; what() is already `place: message`.
class LocatedError : public std::runtime_error {
public:
    /// An error at `where`, saying `message`.
    LocatedError(const Location& where, const std::string& message)
        : std::runtime_error(where.str() + ": " + message), where_(where), message_(message) {}
    /// Where the error is.
    const Location& where() const { return where_; }
    /// The message without the place.
    const std::string& message() const { return message_; }

private:
    Location where_;
    std::string message_;
};

}  // namespace tp
