// PcapngReader: the packets of a pcapng file, block by block (IETF draft-ietf-opsawg-pcapng).
//
// libpcap reads pcapng too, but only while every interface has the first one's link type and
// snapshot length, and it tells neither a packet's interface nor the interfaces' drop counts;
// a capture merged from several interfaces needs all three. So pcapng is read here:
//   - Section Header Blocks in either byte order, major version 1; a new section starts a new
//     set of interfaces.
//   - Interface Description Blocks with their link type, snapshot length, if_tsresol (decimal
//     or binary) and if_tsoffset.
//   - Enhanced, Simple and (obsolete) Packet Blocks, each packet with its interface id (checked
//     against the section's interfaces), captured and original length and timestamp.
//   - Interface Statistics Blocks: the last isb_ifdrop of each interface, and the Packet
//     Block's drops count, sum to interface_drops().
//   - Every other block (name resolution, decryption secrets, custom, ...) is skipped.
// A file that ends inside a block says Truncated (as libpcap: not an error); a block that breaks
// the format (lengths that disagree or run past the block, an unknown interface, a bad section
// header after the first) says Corrupt and problem() says why. The first section header is
// checked by the constructor, which throws LocatedError naming the file.
//
// Thread-safety: one reader per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tp {

class PcapngReader {
public:
    enum class Next { Packet, End, Truncated, Corrupt };

    struct Interface {
        uint16_t linktype = 0;
        uint32_t snaplen = 0;
        bool binary_resolution = false;  // if_tsresol: units of 2^-exponent s, else 10^-exponent s
        uint8_t exponent = 6;
        int64_t offset_s = 0;  // if_tsoffset
        uint64_t ifdrop = 0;   // the last Interface Statistics Block's isb_ifdrop
    };

    // Opens `path` and reads its first section header (a LocatedError if it is not one).
    explicit PcapngReader(const std::string& path);
    ~PcapngReader();
    PcapngReader(const PcapngReader&) = delete;
    PcapngReader& operator=(const PcapngReader&) = delete;

    // True when the file starts like a pcapng file (its first 4 bytes); false for anything
    // else, unreadable files included.
    static bool is_pcapng(const std::string& path);

    Next next();

    // The packet just read.
    const uint8_t* data() const { return data_; }
    uint32_t caplen() const { return caplen_; }
    uint32_t wire_length() const { return wire_length_; }
    uint32_t interface_id() const { return interface_id_; }
    const Interface& interface() const { return interfaces_[interface_id_]; }
    // Nanoseconds since the epoch, or -1 when the packet has none (a Simple Packet Block) or
    // it cannot be a real time.
    int64_t timestamp_ns() const { return timestamp_ns_; }

    // Why the reader stopped (Truncated or Corrupt).
    const std::string& problem() const { return problem_; }
    uint64_t interface_drops() const;
    uint64_t position() const;

private:
    bool read_exact(void* to, size_t n, size_t& got);
    Next fail(Next kind, std::string why);
    Next section_header(const uint8_t* head, bool first);
    bool interface_description(const uint8_t* body, uint32_t size);
    void interface_statistics(const uint8_t* body, uint32_t size);
    uint32_t u32(const uint8_t* p) const;
    uint16_t u16(const uint8_t* p) const;
    uint64_t u64(const uint8_t* p) const;
    int64_t to_ns(const Interface& i, uint64_t units) const;

    std::string path_;
    FILE* file_ = nullptr;
    std::vector<char> io_buffer_;
    std::vector<uint8_t> block_;
    bool swapped_ = false;
    std::vector<Interface> interfaces_;
    uint64_t drops_before_ = 0;  // interface drops of sections already left, and Packet Blocks'
    const uint8_t* data_ = nullptr;
    uint32_t caplen_ = 0;
    uint32_t wire_length_ = 0;
    uint32_t interface_id_ = 0;
    int64_t timestamp_ns_ = -1;
    std::string problem_;
    bool stopped_ = false;
};

}  // namespace tp
