// CaptureReader: one pass over a pcap or pcapng capture, record by record, each record
// normalised to an Ethernet frame (see capture_file.hpp for what each link type becomes).
//
// Both ways of replaying a capture read through it: CaptureFile (a survey pass, then a copy
// into templates) and CaptureStream (a reader thread, pass after pass while looping). It reads
// with libpcap at nanosecond precision, so usec and nsec files both keep every digit.
//
// Errors are LocatedError naming the file and, for a record, its 1-based index as tcpdump
// numbers it. A file that ends inside a record is not an error: next() says Truncated and
// truncation() says where.
//
// Thread-safety: one reader per thread; readers of the same file are independent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/location.hpp"

struct pcap;
struct pcap_pkthdr;

namespace tp {

class CaptureReader {
public:
    enum class Next { Record, End, Truncated };

    // Opens `path` and checks its header and link type.
    explicit CaptureReader(const std::string& path);
    ~CaptureReader();
    CaptureReader(const CaptureReader&) = delete;
    CaptureReader& operator=(const CaptureReader&) = delete;

    // Reads the next record. Throws LocatedError for a record libpcap rejects or one with no
    // bytes; the record's frame stays valid until the next call.
    Next next();

    uint64_t index() const { return index_; }  // 1-based index of the record just read
    uint32_t length() const { return length_; }  // its normalised frame length
    const uint8_t* frame();                      // its normalised frame (`length()` bytes)
    // Its timestamp in nanoseconds since the epoch, or -1 when it cannot be a real time.
    int64_t timestamp_ns() const;
    // Why the last pass stopped early ("record 3: truncated dump file; ..."), once Truncated.
    const std::string& truncation() const { return truncation_; }

    // How far the pass has read, in bytes of the file, and the file's size (progress).
    uint64_t position() const;
    uint64_t file_size() const { return file_size_; }

    // A missing or unreadable path is the user's parameter at fault (located at `named_at`,
    // where the user wrote it), an empty file is the file's.
    static void check_readable(const std::string& path, const Location& named_at);

private:
    struct Link;
    std::string path_;
    std::vector<char> buffer_;  // the file's stdio buffer: outlives pcap_, which closes the file
    pcap* pcap_ = nullptr;
    std::unique_ptr<Link> link_;
    pcap_pkthdr* header_ = nullptr;
    const uint8_t* data_ = nullptr;
    uint64_t index_ = 0;
    uint32_t length_ = 0;
    uint64_t file_size_ = 0;
    std::vector<uint8_t> normalised_;  // the record rewritten to Ethernet, when it was not
    bool normalised_ready_ = false;
    std::string truncation_;
};

// Replay offsets from record timestamps: time from the first valid timestamp, never going
// backwards (a step back or an invalid timestamp replays as a zero gap).
class ReplayOffsets {
public:
    uint64_t offset_of(int64_t ts_ns) {
        if (ts_ns >= 0) {
            if (first_ns_ < 0) first_ns_ = ts_ns;
            if (ts_ns > latest_ns_) latest_ns_ = ts_ns;
        }
        return first_ns_ < 0 ? 0 : uint64_t(latest_ns_ - first_ns_);
    }

private:
    int64_t first_ns_ = -1;
    int64_t latest_ns_ = -1;  // high-water mark
};

}  // namespace tp
