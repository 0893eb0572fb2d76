/// @file
/// Stage parameters: declared once where a stage registers (name, type, default, meaning),
/// and read from there by the config validator, `--set`, and `tilepipe stages`.
///
///     param<uint32_t>("every", 16, "keep one packet out of this many").at_least(1)
///     param<std::string>("file", required, "capture to replay").input_file()
///
/// Numbers are decimal (with an optional k/M/G suffix for unsigned ones) unless written with
/// 0x; a value outside its declared type's range or the declared bounds is refused where it is
/// written, so a check that a bound can express never needs code in the stage.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tilepipe/error.hpp"

namespace tp {

/// The type of a parameter's value.
enum class ParamType { Uint, Int, Double, Bool, String };

/// "uint", "int", "double", "bool" or "string".
const char* param_type_name(ParamType t);

/// Marker for a parameter without a default (see `required`).
struct RequiredTag {};
/// Pass as param()'s default: the user must set the parameter.
inline constexpr RequiredTag required{};

/// The declaration of one parameter of a stage.
struct ParamSpec {
    std::string name;                  ///< as written in the config: `{ stage: x, NAME: value }`
    ParamType type = ParamType::String;  ///< the value's type
    bool required = false;             ///< no default: the user must set it
    std::string default_text;          ///< the default as a user would write it; empty when required
    std::string help;                  ///< one line for `tilepipe stages`
    std::vector<std::string> choices;  ///< for strings: the only accepted values, if any
    /// Smallest accepted number (inclusive); long double holds every 64-bit integer exactly.
    /// Starts as the declared C++ type's range; between()/at_least() narrow it.
    long double min = -std::numeric_limits<long double>::infinity();
    /// Largest accepted number (inclusive).
    long double max = std::numeric_limits<long double>::infinity();

    bool bounded = false;      ///< narrowed by the declaration (then `tilepipe stages` shows it)
    bool max_declared = false; ///< the upper bound is the declaration's, not just the type's
    bool reads_file = false;   ///< names a file the stage reads: relative to the config's folder

    /// Accepts only numbers in [lo, hi].
    ParamSpec& between(long double lo, long double hi) {
        min = lo, max = hi, bounded = max_declared = true;
        return *this;
    }
    /// Accepts only numbers >= lo.
    ParamSpec& at_least(long double lo) { min = lo, bounded = true; return *this; }
    /// The value names a file the stage reads: a relative path is found beside the config.
    ParamSpec& input_file() { reads_file = true; return *this; }
    /// The accepted range as a user reads it: "1-65536", ">= 1"; empty when not narrowed.
    std::string range_text() const;
};

/// The ParamType of C++ type T (bool, floating point, unsigned, signed, else string).
template <typename T>
constexpr ParamType param_type_of() {
    if constexpr (std::is_same_v<T, bool>) return ParamType::Bool;
    else if constexpr (std::is_floating_point_v<T>) return ParamType::Double;
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return ParamType::Uint;
    else if constexpr (std::is_integral_v<T>) return ParamType::Int;
    else return ParamType::String;
}

/// A default as the user would write it.
std::string param_default_text(bool v);
/// A default as the user would write it.
std::string param_default_text(double v);
/// A default as the user would write it.
std::string param_default_text(const char* v);
/// A default as the user would write it.
std::string param_default_text(const std::string& v);
/// A default as the user would write it.
template <typename T>
    requires std::is_integral_v<T>
std::string param_default_text(T v) { return std::to_string(v); }

/// Declares parameter `name` of C++ type T with default `def` (or `required`), a one-line
/// `help`, and for strings the accepted `choices`. Integers are bounded by T's range.
template <typename T, typename D>
ParamSpec param(std::string name, D def, std::string help, std::vector<std::string> choices = {}) {
    ParamSpec p{std::move(name), param_type_of<T>(), false, "", std::move(help), std::move(choices)};
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        p.min = static_cast<long double>(std::numeric_limits<T>::min());
        p.max = static_cast<long double>(std::numeric_limits<T>::max());
    }
    if constexpr (std::is_same_v<D, RequiredTag>) p.required = true;
    else if constexpr (std::is_same_v<T, bool>) p.default_text = param_default_text(bool(def));
    else if constexpr (std::is_floating_point_v<T>) p.default_text = param_default_text(double(def));
    else p.default_text = param_default_text(def);
    return p;
}

/// The parameters of one node after validation: every declared parameter has a value (given
/// or default) of its declared type, and remembers where it was written for later errors.
class ParamValues {
public:
    /// A value of one of the ParamTypes.
    using Value = std::variant<uint64_t, int64_t, double, bool, std::string>;

    /// Parses `text` as `spec.type`; throws LocatedError at `where` if it does not fit.
    void set(const ParamSpec& spec, const std::string& text, const Location& where);
    /// Fills `spec`'s default unless a value was given (a required one missing throws at the node).
    void set_default(const ParamSpec& spec);

    /// The value of a `uint` parameter.
    uint64_t get_uint(const std::string& name) const;
    /// The value of an `int` parameter.
    int64_t get_int(const std::string& name) const;
    /// The value of a `double` parameter.
    double get_double(const std::string& name) const;
    /// The value of a `bool` parameter.
    bool get_bool(const std::string& name) const;
    /// The value of a `string` parameter.
    const std::string& get_string(const std::string& name) const;
    /// Written by the user (not a default).
    bool given(const std::string& name) const;
    /// The value as written (or the default's text).
    const std::string& text(const std::string& name) const;

    /// Where the value came from (the config key, `--set`, or the node when defaulted); stage
    /// errors found later (a file that cannot be read) point there.
    const Location& where(const std::string& name) const;
    /// Where the node is in the config.
    const Location& node_location() const { return node_loc_; }
    /// Sets where the node is in the config.
    void set_node_location(const Location& l) { node_loc_ = l; }

    /// Throws LocatedError(where(name), message).
    [[noreturn]] void fail(const std::string& name, const std::string& message) const;

private:
    struct Entry {
        Value value;
        std::string text;
        Location where;
        bool given = false;
    };
    const Entry& entry(const std::string& name) const;
    std::map<std::string, Entry> values_;
    Location node_loc_;
};

}  // namespace tp
