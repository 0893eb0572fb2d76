#include "framework/plugin/elf_extent.hpp"

#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace tp {

namespace {
bool read_at(int fd, void* to, size_t n, uint64_t at) {
    return ::pread(fd, to, n, static_cast<off_t>(at)) == static_cast<ssize_t>(n);
}
}  // namespace

std::string elf_cut_short(int fd, off_t size) {
    Elf64_Ehdr eh{};
    // Only what this host's dlopen maps: a little-endian 64-bit shared object with program
    // headers. Anything else (an object file, another architecture) is dlopen's to explain.
    if (!read_at(fd, &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN || eh.e_phentsize != sizeof(Elf64_Phdr))
        return "";
    const auto file = static_cast<uint64_t>(size);
    const auto past = [&](uint64_t offset, uint64_t bytes) { return offset > file || bytes > file - offset; };
    const std::string of_file = " of a " + std::to_string(file) + "-byte file";
    if (past(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr)))
        return "is cut short: its program headers end past the end" + of_file + " (an interrupted copy?)";
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    if (!ph.empty() && !read_at(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff))
        return "cannot read its program headers";
    for (size_t i = 0; i < ph.size(); ++i)
        if (ph[i].p_type == PT_LOAD && ph[i].p_filesz != 0 && past(ph[i].p_offset, ph[i].p_filesz))
            return "is cut short: its segment " + std::to_string(i) + " ends at byte " +
                   std::to_string(ph[i].p_offset + ph[i].p_filesz) + of_file + " (an interrupted copy?)";
    if (eh.e_shnum != 0 && past(eh.e_shoff, uint64_t(eh.e_shnum) * eh.e_shentsize))
        return "is cut short: its section headers end at byte " +
               std::to_string(eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize) + of_file + " (an interrupted copy?)";
    return "";
}

}  // namespace tp
