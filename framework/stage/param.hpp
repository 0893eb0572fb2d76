// Stage parameters: declared once where a stage registers (name, type, default, meaning), and
// read from there by the config validator, `--set`, and `tilepipe stages`.
//
//   param<uint32_t>("every", 16, "keep one packet out of this many").at_least(1)
//   param<std::string>("file", required, "capture to replay")
//
// Numbers are decimal (with an optional k/M/G suffix for unsigned ones) unless written with 0x;
// a value outside its declared type's range or the declared bounds is refused where it is
// written, so a check that a bound can express never needs code in the stage.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "framework/config/location.hpp"

namespace tp {

enum class ParamType { Uint, Int, Double, Bool, String };

const char* param_type_name(ParamType t);

// Marker for a parameter without a default.
struct RequiredTag {};
inline constexpr RequiredTag required{};

struct ParamSpec {
    std::string name;
    ParamType type = ParamType::String;
    bool required = false;
    std::string default_text;  // as a user would write it; empty when required
    std::string help;
    std::vector<std::string> choices;  // for strings: the only accepted values, if any
    // Accepted range of a number (inclusive); long double holds every 64-bit integer exactly.
    // Starts as the declared C++ type's range; between()/at_least() narrow it.
    long double min = -std::numeric_limits<long double>::infinity();
    long double max = std::numeric_limits<long double>::infinity();

    bool bounded = false;      // narrowed by the declaration (then `tilepipe stages` shows it)
    bool max_declared = false; // the upper bound is the declaration's, not just the type's
    bool reads_file = false;   // names a file the stage reads: relative to the config's folder

    ParamSpec& between(long double lo, long double hi) {
        min = lo, max = hi, bounded = max_declared = true;
        return *this;
    }
    ParamSpec& at_least(long double lo) { min = lo, bounded = true; return *this; }
    ParamSpec& input_file() { reads_file = true; return *this; }
    // The accepted range as a user reads it: "1-65536", ">= 1"; empty when not narrowed.
    std::string range_text() const;
};

template <typename T>
constexpr ParamType param_type_of() {
    if constexpr (std::is_same_v<T, bool>) return ParamType::Bool;
    else if constexpr (std::is_floating_point_v<T>) return ParamType::Double;
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return ParamType::Uint;
    else if constexpr (std::is_integral_v<T>) return ParamType::Int;
    else return ParamType::String;
}

std::string param_default_text(bool v);
std::string param_default_text(double v);
std::string param_default_text(const char* v);
std::string param_default_text(const std::string& v);
template <typename T>
    requires std::is_integral_v<T>
std::string param_default_text(T v) { return std::to_string(v); }

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

// The parameters of one node after validation: every declared parameter has a value (given or
// default) of its declared type, and remembers where it was written for later errors.
class ParamValues {
public:
    using Value = std::variant<uint64_t, int64_t, double, bool, std::string>;

    // Parses `text` as `spec.type`; throws LocatedError at `where` if it does not fit.
    void set(const ParamSpec& spec, const std::string& text, const Location& where);
    // Fills `spec`'s default unless a value was given (a required one missing throws at the node).
    void set_default(const ParamSpec& spec);

    uint64_t get_uint(const std::string& name) const;
    int64_t get_int(const std::string& name) const;
    double get_double(const std::string& name) const;
    bool get_bool(const std::string& name) const;
    const std::string& get_string(const std::string& name) const;
    bool given(const std::string& name) const;  // written by the user (not a default)
    const std::string& text(const std::string& name) const;

    // Where the value came from (the config key, `--set`, or the node when defaulted); stage
    // errors found later (a file that cannot be read) point there.
    const Location& where(const std::string& name) const;
    const Location& node_location() const { return node_loc_; }
    void set_node_location(const Location& l) { node_loc_ = l; }

    // Throws LocatedError(where(name), message).
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
