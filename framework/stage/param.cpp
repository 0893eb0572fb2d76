#include "framework/stage/param.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace tp {

const char* param_type_name(ParamType t) {
    switch (t) {
        case ParamType::Uint: return "uint";
        case ParamType::Int: return "int";
        case ParamType::Double: return "float";
        case ParamType::Bool: return "bool";
        case ParamType::String: return "string";
    }
    return "?";
}

std::string param_default_text(bool v) { return v ? "true" : "false"; }
std::string param_default_text(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}
std::string param_default_text(const char* v) { return v; }
std::string param_default_text(const std::string& v) { return v; }

namespace {

// Decimal unless written with 0x: a leading zero is not octal, so "0100" is a hundred.
int base_of(const char* digits) {
    return digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
}

// Accepts decimal with optional k/M/G suffix (powers of 1000) or 0x hex; rejects anything
// trailing, so "10 packets" is an error rather than 10.
bool parse_u64(const std::string& s, uint64_t& out) {
    if (s.empty() || s[0] == '-' || s[0] == '+' || std::isspace(static_cast<unsigned char>(s[0])))
        return false;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, base_of(s.c_str()));
    if (errno != 0 || end == s.c_str()) return false;
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1000, ++end;
    else if (*end == 'M') mul = 1000000, ++end;
    else if (*end == 'G') mul = 1000000000, ++end;
    if (*end != '\0') return false;
    if (mul != 1 && v > UINT64_MAX / mul) return false;
    out = v * mul;
    return true;
}

bool parse_i64(const std::string& s, int64_t& out) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
    errno = 0;
    char* end = nullptr;
    const size_t sign = s[0] == '-' || s[0] == '+' ? 1 : 0;
    long long v = std::strtoll(s.c_str(), &end, base_of(s.c_str() + sign));
    if (errno != 0 || end == s.c_str() || *end != '\0') return false;
    out = v;
    return true;
}

bool parse_double(const std::string& s, double& out) {
    // strtod would also take hex floats, "inf" and leading blanks; a config means decimals.
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])) ||
        s.find_first_of("xXpP") != std::string::npos)
        return false;
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || end == s.c_str() || *end != '\0' || !std::isfinite(v)) return false;
    out = v;
    return true;
}

bool parse_bool(const std::string& s, bool& out) {
    if (s == "true" || s == "yes" || s == "on" || s == "1") return out = true, true;
    if (s == "false" || s == "no" || s == "off" || s == "0") return out = false, true;
    return false;
}

std::string number_text(long double v) {
    std::ostringstream os;
    os.precision(20);
    os << v;
    return os.str();
}

}  // namespace

std::string ParamSpec::range_text() const {
    if (!bounded) return "";
    if (!max_declared) return ">= " + number_text(min);
    return number_text(min) + "-" + number_text(max);
}

void ParamValues::set(const ParamSpec& spec, const std::string& text, const Location& where) {
    Entry e;
    e.text = text;
    e.where = where;
    e.given = true;
    auto bad = [&](const char* what) {
        throw LocatedError(where, "parameter '" + spec.name + "' expects " + what + ", got '" +
                                      text + "'");
    };
    auto in_range = [&](long double v) {
        if (v >= spec.min && v <= spec.max) return;
        std::string range;
        if (v < spec.min && (spec.bounded && !spec.max_declared))
            range = "at least " + number_text(spec.min);
        else if (spec.min == -std::numeric_limits<long double>::infinity())
            range = "at most " + number_text(spec.max);
        else
            range = "from " + number_text(spec.min) + " to " + number_text(spec.max);
        throw LocatedError(where, "parameter '" + spec.name + "' must be " + range + ", got '" +
                                      text + "'");
    };
    switch (spec.type) {
        case ParamType::Uint: {
            uint64_t v;
            if (!parse_u64(text, v)) bad("an unsigned integer");
            in_range(static_cast<long double>(v));
            e.value = v;
            break;
        }
        case ParamType::Int: {
            int64_t v;
            if (!parse_i64(text, v)) bad("an integer");
            in_range(static_cast<long double>(v));
            e.value = v;
            break;
        }
        case ParamType::Double: {
            double v;
            if (!parse_double(text, v)) bad("a number");
            in_range(v);
            e.value = v;
            break;
        }
        case ParamType::Bool: {
            bool v;
            if (!parse_bool(text, v)) bad("true or false");
            e.value = v;
            break;
        }
        case ParamType::String:
            if (!spec.choices.empty()) {
                bool ok = false;
                for (const auto& c : spec.choices) ok = ok || c == text;
                if (!ok) {
                    std::string list;
                    for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
                    bad(("one of: " + list).c_str());
                }
            }
            e.value = text;
            break;
    }
    values_[spec.name] = std::move(e);
}

void ParamValues::set_default(const ParamSpec& spec) {
    if (values_.count(spec.name) != 0) return;
    if (spec.required)
        throw LocatedError(node_loc_, "missing required parameter '" + spec.name + "' (" +
                                          spec.help + ")");
    set(spec, spec.default_text, node_loc_);
    values_[spec.name].given = false;
}

const ParamValues::Entry& ParamValues::entry(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        throw std::logic_error("stage reads undeclared parameter '" + name + "'");
    return it->second;
}

uint64_t ParamValues::get_uint(const std::string& n) const { return std::get<uint64_t>(entry(n).value); }
int64_t ParamValues::get_int(const std::string& n) const { return std::get<int64_t>(entry(n).value); }
double ParamValues::get_double(const std::string& n) const { return std::get<double>(entry(n).value); }
bool ParamValues::get_bool(const std::string& n) const { return std::get<bool>(entry(n).value); }
const std::string& ParamValues::get_string(const std::string& n) const {
    return std::get<std::string>(entry(n).value);
}
bool ParamValues::given(const std::string& n) const {
    auto it = values_.find(n);
    return it != values_.end() && it->second.given;
}
const std::string& ParamValues::text(const std::string& n) const { return entry(n).text; }
const Location& ParamValues::where(const std::string& n) const {
    auto it = values_.find(n);
    return it == values_.end() || !it->second.given ? node_loc_ : it->second.where;
}
void ParamValues::fail(const std::string& name, const std::string& message) const {
    throw LocatedError(where(name), message);
}

}  // namespace tp
