#include "framework/capture/pcapng_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "framework/config/location.hpp"

namespace tp {

namespace {

constexpr uint32_t kSectionHeader = 0x0A0D0D0A;
constexpr uint32_t kInterfaceDescription = 1;
constexpr uint32_t kPacket = 2;  // obsolete Packet Block
constexpr uint32_t kSimplePacket = 3;
constexpr uint32_t kInterfaceStatistics = 5;
constexpr uint32_t kEnhancedPacket = 6;
constexpr uint32_t kByteOrderMagic = 0x1A2B3C4D;
// As libpcap: no block (so no packet) may be longer; a larger length is a damaged file.
constexpr uint32_t kMaxBlock = 16 * 1024 * 1024;
constexpr size_t kBlockReadBuffer = 1 << 20;

uint32_t swap32(uint32_t v) { return __builtin_bswap32(v); }

std::string hex(uint32_t v) {
    char s[16];
    std::snprintf(s, sizeof s, "0x%08x", v);
    return s;
}

}  // namespace

bool PcapngReader::is_pcapng(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    uint32_t magic = 0;
    const bool read = std::fread(&magic, 4, 1, f) == 1;
    std::fclose(f);
    return read && magic == kSectionHeader;  // a palindrome: the same in both byte orders
}

PcapngReader::PcapngReader(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) throw LocatedError(Location{path}, std::string("cannot open: ") + std::strerror(errno));
    io_buffer_.resize(kBlockReadBuffer);
    std::setvbuf(file_, io_buffer_.data(), _IOFBF, io_buffer_.size());
    uint8_t head[12];
    size_t got = 0;
    Next n = Next::Corrupt;
    if (!read_exact(head, sizeof head, got)) problem_ = "truncated pcapng dump file: no whole section header";
    else n = section_header(head, true);
    if (n != Next::Packet) {
        std::fclose(file_);
        file_ = nullptr;
        throw LocatedError(Location{path}, problem_);
    }
}

PcapngReader::~PcapngReader() {
    if (file_ != nullptr) std::fclose(file_);
}

uint32_t PcapngReader::u32(const uint8_t* p) const {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return swapped_ ? swap32(v) : v;
}
uint16_t PcapngReader::u16(const uint8_t* p) const {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return swapped_ ? __builtin_bswap16(v) : v;
}
uint64_t PcapngReader::u64(const uint8_t* p) const {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return swapped_ ? __builtin_bswap64(v) : v;
}

bool PcapngReader::read_exact(void* to, size_t n, size_t& got) {
    got = std::fread(to, 1, n, file_);
    return got == n;
}

PcapngReader::Next PcapngReader::fail(Next kind, std::string why) {
    problem_ = std::move(why);
    stopped_ = true;
    return kind;
}

uint64_t PcapngReader::position() const {
    const long at = file_ != nullptr ? std::ftell(file_) : -1;
    return at < 0 ? 0 : uint64_t(at);
}

uint64_t PcapngReader::interface_drops() const {
    uint64_t n = drops_before_;
    for (const Interface& i : interfaces_) n += i.ifdrop;
    return n;
}

// `head`: block type, total length, byte-order magic. Reads the rest of the block.
PcapngReader::Next PcapngReader::section_header(const uint8_t* head, bool first) {
    uint32_t magic;
    std::memcpy(&magic, head + 8, 4);
    if (magic == kByteOrderMagic) swapped_ = false;
    else if (magic == swap32(kByteOrderMagic)) swapped_ = true;
    else return fail(Next::Corrupt, "section header with an unknown byte-order magic " + hex(magic));
    const uint32_t total = u32(head + 4);
    if (total < 28 || total % 4 != 0 || total > kMaxBlock)
        return fail(Next::Corrupt, "section header block of " + std::to_string(total) + " bytes (at least 28, a multiple of 4, at most " +
                                       std::to_string(kMaxBlock) + ")");
    block_.resize(total - 12);
    size_t got = 0;
    if (!read_exact(block_.data(), block_.size(), got))
        return fail(first ? Next::Corrupt : Next::Truncated,
                    "truncated pcapng dump file; tried to read " + std::to_string(block_.size()) +
                        " bytes of a section header, only got " + std::to_string(got));
    if (u32(block_.data() + block_.size() - 4) != total)
        return fail(Next::Corrupt, "block total length in header and trailer don't match");
    const uint16_t major = u16(block_.data()), minor = u16(block_.data() + 2);
    if (major != 1)
        return fail(Next::Corrupt, "pcapng version " + std::to_string(major) + "." + std::to_string(minor) +
                                       " is not supported (1.x is)");
    for (const Interface& i : interfaces_) drops_before_ += i.ifdrop;
    interfaces_.clear();
    return Next::Packet;  // "go on"
}

bool PcapngReader::interface_description(const uint8_t* body, uint32_t size) {
    if (size < 8) return false;
    Interface i;
    i.linktype = u16(body);
    i.snaplen = u32(body + 4);
    for (uint32_t at = 8; at + 4 <= size;) {
        const uint16_t code = u16(body + at), length = u16(body + at + 2);
        if (code == 0) break;  // opt_endofopt
        const uint32_t value = at + 4;
        if (value + length > size) return false;
        if (code == 9 && length >= 1) {  // if_tsresol
            i.binary_resolution = (body[value] & 0x80) != 0;
            i.exponent = body[value] & 0x7f;
        } else if (code == 14 && length >= 8) {  // if_tsoffset
            i.offset_s = static_cast<int64_t>(u64(body + value));
        }
        at = value + ((length + 3u) & ~3u);
    }
    interfaces_.push_back(i);
    return true;
}

void PcapngReader::interface_statistics(const uint8_t* body, uint32_t size) {
    if (size < 12) return;
    const uint32_t id = u32(body);
    if (id >= interfaces_.size()) return;  // statistics of nothing: ignored, as readers do
    for (uint32_t at = 12; at + 4 <= size;) {
        const uint16_t code = u16(body + at), length = u16(body + at + 2);
        if (code == 0) break;
        const uint32_t value = at + 4;
        if (value + length > size) return;
        if (code == 5 && length >= 8) interfaces_[id].ifdrop = u64(body + value);  // isb_ifdrop
        at = value + ((length + 3u) & ~3u);
    }
}

int64_t PcapngReader::to_ns(const Interface& i, uint64_t units) const {
    unsigned __int128 ns;
    if (i.binary_resolution) {
        ns = (static_cast<unsigned __int128>(units) * 1000000000u) >> std::min<unsigned>(i.exponent, 127);
    } else if (i.exponent <= 9) {
        unsigned __int128 scale = 1;
        for (int k = i.exponent; k < 9; ++k) scale *= 10;
        ns = static_cast<unsigned __int128>(units) * scale;
    } else {
        unsigned __int128 scale = 1;
        for (int k = 9; k < i.exponent && scale <= std::numeric_limits<uint64_t>::max(); ++k) scale *= 10;
        ns = units / scale;
    }
    const __int128 total = static_cast<__int128>(ns) + static_cast<__int128>(i.offset_s) * 1000000000;
    if (total < 0 || total > std::numeric_limits<int64_t>::max()) return -1;
    return static_cast<int64_t>(total);
}

PcapngReader::Next PcapngReader::next() {
    if (stopped_) return Next::Corrupt;
    for (;;) {
        uint8_t head[12];
        size_t got = 0;
        if (!read_exact(head, 8, got)) {
            if (got == 0 && std::feof(file_)) return Next::End;
            return fail(Next::Truncated, "truncated pcapng dump file; tried to read 8 block header bytes, only got " +
                                             std::to_string(got));
        }
        uint32_t type;
        std::memcpy(&type, head, 4);
        if (type == kSectionHeader) {
            if (!read_exact(head + 8, 4, got))
                return fail(Next::Truncated, "truncated pcapng dump file; a section header cut short");
            const Next n = section_header(head, false);
            if (n != Next::Packet) return n;
            continue;
        }
        type = u32(head);
        const uint32_t total = u32(head + 4);
        if (total < 12 || total % 4 != 0)
            return fail(Next::Corrupt, "block of type " + hex(type) + " has a total length of " + std::to_string(total) +
                                           " (at least 12 and a multiple of 4)");
        if (total > kMaxBlock)
            return fail(Next::Corrupt, "pcapng block size " + std::to_string(total) + " > maximum " + std::to_string(kMaxBlock));
        block_.resize(total - 8);
        if (!read_exact(block_.data(), block_.size(), got))
            return fail(Next::Truncated, "truncated pcapng dump file; tried to read " + std::to_string(block_.size()) +
                                             " bytes, only got " + std::to_string(got));
        const uint32_t size = total - 12;  // body
        const uint8_t* body = block_.data();
        if (u32(body + size) != total) return fail(Next::Corrupt, "block total length in header and trailer don't match");

        uint32_t id = 0, caplen = 0, wire = 0, room = 0, at = 0;
        uint64_t units = 0;
        bool timed = true;
        switch (type) {
            case kInterfaceDescription:
                if (!interface_description(body, size))
                    return fail(Next::Corrupt, "interface description block " + std::to_string(interfaces_.size()) +
                                                   " is malformed (too short, or an option runs past its end)");
                continue;
            case kInterfaceStatistics: interface_statistics(body, size); continue;
            case kEnhancedPacket:
                if (size < 20) return fail(Next::Corrupt, "enhanced packet block of " + std::to_string(total) + " bytes is too short");
                id = u32(body);
                units = uint64_t(u32(body + 4)) << 32 | u32(body + 8);
                caplen = u32(body + 12);
                wire = u32(body + 16);
                at = 20;
                break;
            case kPacket:
                if (size < 20) return fail(Next::Corrupt, "packet block of " + std::to_string(total) + " bytes is too short");
                id = u16(body);
                if (u16(body + 2) != 0xffff) drops_before_ += u16(body + 2);
                units = uint64_t(u32(body + 4)) << 32 | u32(body + 8);
                caplen = u32(body + 12);
                wire = u32(body + 16);
                at = 20;
                break;
            case kSimplePacket:
                if (size < 4) return fail(Next::Corrupt, "simple packet block of " + std::to_string(total) + " bytes is too short");
                wire = u32(body);
                at = 4;
                timed = false;
                break;
            default: continue;  // a block that holds no packet
        }
        if (id >= interfaces_.size())
            return fail(Next::Corrupt, "a packet of interface " + std::to_string(id) + ", but the section describes " +
                                           std::to_string(interfaces_.size()) + " interface(s)");
        room = size - at;
        if (type == kSimplePacket) {
            caplen = std::min(wire, room);
            if (interfaces_[0].snaplen != 0) caplen = std::min(caplen, interfaces_[0].snaplen);
        } else if (caplen > room) {
            return fail(Next::Corrupt, "captured length " + std::to_string(caplen) + " runs past the end of its block (" +
                                           std::to_string(room) + " bytes)");
        }
        interface_id_ = id;
        data_ = body + at;
        caplen_ = caplen;
        wire_length_ = wire;
        timestamp_ns_ = timed ? to_ns(interfaces_[id], units) : -1;
        return Next::Packet;
    }
}

}  // namespace tp
