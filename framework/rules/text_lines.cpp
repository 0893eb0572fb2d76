#include "framework/rules/text_lines.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tp {

std::vector<std::string> read_text_lines(const std::string& path, const Location& named_at, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw LocatedError(named_at, "cannot read '" + path + "': it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw LocatedError(named_at, "cannot read '" + path + "': " + std::strerror(errno));
    std::vector<std::string> lines(1);
    size_t total = 0;
    char buf[1 << 16];
    // In chunks, not getline: a file without newlines (/dev/zero) must not be one endless line.
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        const auto n = static_cast<size_t>(in.gcount());
        if ((total += n) > kMaxTextFileBytes)
            throw LocatedError(Location{path}, "is larger than " + std::to_string(kMaxTextFileBytes >> 20) + " MiB: not a " +
                                                   what + " file?");
        for (size_t i = 0; i < n; ++i) {
            const char c = buf[i];
            const auto line = static_cast<int>(lines.size());
            if (c == '\0')
                throw LocatedError(Location{path, line}, "holds binary data (a NUL byte): a " + what + " file is text");
            if (c == '\n') {
                if (lines.size() == kMaxTextLines)
                    throw LocatedError(Location{path}, "has more than " + std::to_string(kMaxTextLines) + " lines: not a " + what +
                                                           " file?");
                lines.emplace_back();
                continue;
            }
            if (lines.back().size() == kMaxTextLineBytes)
                throw LocatedError(Location{path, line}, "a line longer than " + std::to_string(kMaxTextLineBytes >> 20) +
                                                             " MiB: a " + what + " file holds one entry a line");
            lines.back() += c;
        }
    }
    if (in.bad()) throw LocatedError(named_at, "cannot read '" + path + "': " + std::strerror(errno));
    if (lines.back().empty()) lines.pop_back();  // the newline that ends the last line
    return lines;
}

}  // namespace tp
