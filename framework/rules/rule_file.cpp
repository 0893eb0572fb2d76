#include "framework/rules/rule_file.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "framework/rules/text_lines.hpp"

namespace tp {

RuleFile::RuleFile(const std::string& path, const Location& named_at) : path_(path) {
    int number = 0;
    for (std::string& text : read_text_lines(path, named_at, "rules")) {
        ++number;
        const auto hash = text.find('#');
        if (hash != std::string::npos) text.erase(hash);
        std::istringstream words(text);
        RuleLine line;
        line.number = number;
        for (std::string w; words >> w;) line.words.push_back(std::move(w));
        if (!line.words.empty()) lines_.push_back(std::move(line));
    }
}

void RuleFile::fail(const RuleLine& line, const std::string& message) const {
    throw LocatedError(where(line), message);
}

// ---- values ---------------------------------------------------------------------------------

std::string trim_blanks(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

bool parse_decimal(const std::string& text, uint64_t max, uint64_t& out) {
    if (text.empty() || text.size() > 20) return false;
    uint64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        const uint64_t digit = uint64_t(c - '0');
        if (v > (max - digit) / 10) return false;
        v = v * 10 + digit;
    }
    out = v;
    return true;
}

std::string IpPrefix::str() const {
    char buf[INET6_ADDRSTRLEN];
    if (ipv6) {
        inet_ntop(AF_INET6, v6.data(), buf, sizeof buf);
    } else {
        const uint32_t be = htonl(v4);
        inet_ntop(AF_INET, &be, buf, sizeof buf);
    }
    return std::string(buf) + "/" + std::to_string(length);
}

bool parse_ipv4_address(const std::string& text, uint32_t& out, std::string& why) {
    in_addr a{};
    if (inet_pton(AF_INET, text.c_str(), &a) != 1) {
        why = "'" + text + "' is not an IPv4 address";
        return false;
    }
    out = ntohl(a.s_addr);
    return true;
}

bool parse_ip_prefix(const std::string& text, IpPrefix& out, std::string& why) {
    const auto slash = text.find('/');
    const std::string address = text.substr(0, slash);
    IpPrefix p;
    in_addr a4{};
    if (inet_pton(AF_INET, address.c_str(), &a4) == 1) {
        p.v4 = ntohl(a4.s_addr);
    } else if (inet_pton(AF_INET6, address.c_str(), p.v6.data()) == 1) {
        p.ipv6 = true;
    } else {
        why = "'" + address + "' is not an IPv4 or IPv6 address";
        return false;
    }
    const uint64_t width = p.ipv6 ? 128 : 32;
    uint64_t length = width;
    if (slash != std::string::npos && !parse_decimal(text.substr(slash + 1), width, length)) {
        why = "bad prefix length in '" + text + "': expected 0-" + std::to_string(width);
        return false;
    }
    p.length = static_cast<uint8_t>(length);

    // Bits beyond the prefix: clear them to see whether anything changes.
    IpPrefix masked = p;
    if (p.ipv6) {
        for (unsigned byte = 0; byte < 16; ++byte) {
            const int keep = std::clamp(int(length) - int(byte * 8), 0, 8);
            masked.v6[byte] &= static_cast<uint8_t>(0xff00u >> keep);
        }
    } else {
        masked.v4 = length == 0 ? 0 : p.v4 & (0xffffffffu << (32 - length));
    }
    if (masked.v4 != p.v4 || masked.v6 != p.v6) {
        why = "'" + text + "' has bits set beyond its prefix length (meant " + masked.str() + "?)";
        return false;
    }
    out = p;
    return true;
}

bool parse_port_range(const std::string& text, uint16_t& low, uint16_t& high, std::string& why) {
    const auto dash = text.find('-');
    uint64_t lo = 0;
    uint64_t hi = 0;
    const bool ok = dash == std::string::npos
                        ? parse_decimal(text, 65535, lo) && (hi = lo, true)
                        : parse_decimal(text.substr(0, dash), 65535, lo) &&
                              parse_decimal(text.substr(dash + 1), 65535, hi);
    if (!ok) {
        why = "bad port '" + text + "': expected a port 0-65535 or a range LOW-HIGH";
        return false;
    }
    if (lo > hi) {
        why = "bad port range '" + text + "': " + std::to_string(lo) + " is above " +
              std::to_string(hi);
        return false;
    }
    low = static_cast<uint16_t>(lo);
    high = static_cast<uint16_t>(hi);
    return true;
}

bool parse_mac_address(const std::string& text, std::array<uint8_t, 6>& out, std::string& why) {
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    bool ok = text.size() == 17;
    for (size_t i = 0; ok && i < 6; ++i) {
        const int h = hex(text[i * 3]);
        const int l = hex(text[i * 3 + 1]);
        const char sep = i < 5 ? text[i * 3 + 2] : text[2];
        ok = h >= 0 && l >= 0 && (sep == ':' || sep == '-') && sep == text[2];
        if (ok) out[i] = static_cast<uint8_t>(h << 4 | l);
    }
    if (!ok) why = "'" + text + "' is not a MAC address (expected six hex bytes, aa:bb:cc:dd:ee:ff)";
    return ok;
}

}  // namespace tp
