// Whether a shared library's file holds every byte its ELF headers say it has. dlopen maps a
// library's segments as its program headers give them; a file cut short (a copy interrupted,
// a full disk) maps pages past its end, and the first touch of one is a SIGBUS, not an error
// dlopen could report. So the loader checks the extents first.
#pragma once

#include <sys/types.h>

#include <string>

namespace tp {

// Why the ELF file open on `fd`, `size` bytes long, is cut short (its headers, or a segment
// that ends past the end of the file); empty when every extent fits, and for a file that is
// not 64-bit ELF at all (dlopen says what that is).
std::string elf_cut_short(int fd, off_t size);

}  // namespace tp
