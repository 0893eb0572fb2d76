// RuleFile: a line-oriented text file (ACL rules, routes) read whole before traffic starts,
// and the values such files and stage parameters are written in (addresses, prefixes, ports).
//
// Format shared by every rule file: one entry per line, words separated by blanks or tabs,
// `#` starts a comment that runs to the end of the line, blank lines are ignored. What the
// words mean is the stage's business; RuleFile keeps each line's 1-based number so every
// mistake is reported as `file:line: message` (a LocatedError with column 0).
//
// The value parsers are pure and thread-safe: they return false and say why in `why`, so the
// caller can put the message at a file line or at a stage parameter.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/config/location.hpp"

namespace tp {

struct RuleLine {
    int number = 0;                   // 1-based line number in the file
    std::vector<std::string> words;   // at least one word
};

class RuleFile {
public:
    // Reads `path`; a file that cannot be read is a LocatedError at `named_at` (where the user
    // wrote the path).
    RuleFile(const std::string& path, const Location& named_at);

    const std::string& path() const { return path_; }
    const std::vector<RuleLine>& lines() const { return lines_; }  // comments and blanks gone

    Location where(const RuleLine& line) const { return Location{path_, line.number, 0}; }
    // Throws LocatedError(`file:line`, message).
    [[noreturn]] void fail(const RuleLine& line, const std::string& message) const;

private:
    std::string path_;
    std::vector<RuleLine> lines_;
};

// An IPv4 or IPv6 prefix. IPv4 addresses are held in host byte order; IPv6 as the 16 bytes of
// the address in network order.
struct IpPrefix {
    bool ipv6 = false;
    uint32_t v4 = 0;
    std::array<uint8_t, 16> v6{};
    uint8_t length = 0;  // 0-32 or 0-128

    std::string str() const;  // "10.0.0.0/8", "2001:db8::/32"
};

// "ADDRESS/LEN" or a bare "ADDRESS" (a host: /32 or /128). Refuses a length beyond the family's
// width and an address with bits set beyond the prefix ("10.0.0.1/8"), which is nearly always a
// typing mistake; `why` then proposes the prefix that was probably meant.
bool parse_ip_prefix(const std::string& text, IpPrefix& out, std::string& why);

// A dotted-quad IPv4 address, host byte order.
bool parse_ipv4_address(const std::string& text, uint32_t& out, std::string& why);

// "N" or "LOW-HIGH" with 0 <= LOW <= HIGH <= 65535.
bool parse_port_range(const std::string& text, uint16_t& low, uint16_t& high, std::string& why);

// `text` without its leading and trailing blanks (spaces, tabs, carriage returns).
std::string trim_blanks(const std::string& text);

// A decimal number no larger than `max` (no sign, no suffix).
bool parse_decimal(const std::string& text, uint64_t max, uint64_t& out);

// "aa:bb:cc:dd:ee:ff" (also with '-' separators), hexadecimal, case-insensitive.
bool parse_mac_address(const std::string& text, std::array<uint8_t, 6>& out, std::string& why);

}  // namespace tp
