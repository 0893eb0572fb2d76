// CaptureReader: one pass over a pcap or pcapng capture, record by record, each record
// normalised to an Ethernet frame (link_layer.hpp says what each link type becomes).
//
// Both ways of replaying a capture read through it: CaptureFile (a survey pass, then a copy
// into templates) and CaptureStream (a reader thread, pass after pass while looping). Classic
// pcap is read with libpcap at nanosecond precision, so usec and nsec files both keep every
// digit; pcapng with PcapngReader, which reads what libpcap refuses (interfaces of different
// link types and snapshot lengths) and tells each packet's interface, each normalised by its
// own interface's link type.
//
// What next() says of each record (numbered from 1 as tcpdump numbers them):
//   Record     a frame to replay
//   Skipped    a record with no Ethernet form (no captured bytes, an 802.11 management frame,
//              ...): skip_reason() says which; it is counted, never replayed
//   End        the end of the file
//   Truncated  the file ends inside a record (truncation() says where): not an error, the
//              records before it are good
//   Corrupt    a record breaks the format (a captured length beyond the snapshot or its block,
//              lengths that disagree, ...): error() says which record and why; nothing after
//              it is read. With `strict`, next() throws that LocatedError instead.
// Errors are LocatedError naming the file and, for a record, its index. A header libpcap or
// the pcapng reader rejects, and a link type not supported, are refused by the constructor
// (for pcapng: by next(), at the first packet of such an interface).
//
// Thread-safety: one reader per thread; readers of the same file are independent.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/location.hpp"
#include "framework/capture/link_layer.hpp"

struct pcap;
struct pcap_pkthdr;

namespace tp {

class PcapngReader;

class CaptureReader {
public:
    enum class Next { Record, Skipped, End, Truncated, Corrupt };

    // Opens `path` and checks its header (and, for classic pcap, its link type).
    explicit CaptureReader(const std::string& path, bool strict = false);
    ~CaptureReader();
    CaptureReader(const CaptureReader&) = delete;
    CaptureReader& operator=(const CaptureReader&) = delete;

    // Reads the next record. The record's frame stays valid until the next call.
    Next next();

    uint64_t index() const { return index_; }      // 1-based index of the record just read
    uint32_t length() const { return frame_.length; }  // its normalised frame length
    const uint8_t* frame() const { return frame_.data; }  // its normalised frame
    uint32_t wire_length() const { return frame_.wire_length; }  // its length on the wire, normalised
    SkipReason skip_reason() const { return frame_.skip; }  // once Skipped
    // Its timestamp in nanoseconds since the epoch, or -1 when it cannot be a real time.
    int64_t timestamp_ns() const;
    // Why the last pass stopped early ("record 3: truncated dump file; ..."), once Truncated.
    const std::string& truncation() const { return truncation_; }
    // Why a record is damaged ("record 3: invalid packet capture length ..."), once Corrupt.
    const std::string& error() const { return error_; }
    // Packets the capturing interfaces said they dropped (pcapng statistics), so far.
    uint64_t interface_drops() const;

    // How far the pass has read, in bytes of the file, and the file's size (progress).
    uint64_t position() const;
    uint64_t file_size() const { return file_size_; }

    // A missing or unreadable path is the user's parameter at fault (located at `named_at`,
    // where the user wrote it), an empty file is the file's.
    static void check_readable(const std::string& path, const Location& named_at);

private:
    Next next_pcap();
    Next next_pcapng();
    Next corrupt(const std::string& why);
    Next record(const LinkLayer& link, const uint8_t* data, uint32_t caplen, uint32_t wire);

    std::string path_;
    bool strict_ = false;
    std::vector<char> buffer_;  // the file's stdio buffer: outlives pcap_, which closes the file
    pcap* pcap_ = nullptr;
    std::unique_ptr<PcapngReader> pcapng_;
    LinkLayer pcap_link_;
    pcap_pkthdr* header_ = nullptr;
    uint64_t index_ = 0;
    uint64_t file_size_ = 0;
    EthernetFrame frame_;
    std::vector<uint8_t> normalised_;  // the record rewritten to Ethernet, when it was not
    std::string truncation_;
    std::string error_;
};

// Records skipped in one pass, by reason, with the first of each (for one warning per reason).
struct SkippedRecords {
    std::array<uint64_t, kSkipReasons> count{};
    std::array<uint64_t, kSkipReasons> first{};  // 1-based record index

    void add(SkipReason r, uint64_t index) {
        if (count[size_t(r)]++ == 0) first[size_t(r)] = index;
    }
    uint64_t total() const {
        uint64_t n = 0;
        for (const uint64_t c : count) n += c;
        return n;
    }
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
