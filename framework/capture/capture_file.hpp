// CaptureFile: a whole pcap or pcapng capture held in template mbufs, ready to be replayed.
//
// Loading reads the file twice with libpcap (nanosecond precision, so usec and nsec files both
// keep every digit, through CaptureReader): a survey pass that validates every record and sizes
// a private mbuf pool, then a copy pass into that pool. Frames longer than one template segment
// are chained. After loading nothing touches the file again; replaying reads the templates only.
// The survey of an unchanged file is remembered, so memory_needed() and loading read it once.
// Both passes show their progress on stderr when they take a while (LoadProgress) and stop at
// a stop request (Ctrl-C): the capture then holds nothing and `interrupted()` says so.
//
// Link types: the templates are always Ethernet frames, because that is what `parse` reads;
// other link types are normalised at load time (link_layer.hpp). Record lengths, `bytes()` and
// `max_length()` are those of the normalised frames; each record also keeps its wire length
// (the original length the capture recorded, normalised likewise).
//
// What is not replayed, and how it is told:
//   - Records with no Ethernet form (no captured bytes, 802.11 management frames, PPP control
//     protocols, ...: link_layer.hpp) are skipped and counted by reason (`skipped()`).
//   - A file cut short inside a record: the records before the cut load and `truncation()`
//     says where it stopped.
//   - A damaged record (one libpcap or the pcapng reader rejects: a captured length beyond the
//     snapshot, lengths that disagree, ...): loading stops there, the records before it load and
//     `error()` says which record and why. With `strict`, the file is refused instead.
// Refused (LocatedError, one line naming the file and, for a record, its 1-based index as
// tcpdump numbers it): a file that cannot be opened (located at `named_at`, where the user
// wrote the path), an empty or non-capture file, a header libpcap or the pcapng reader
// rejects, a link type not supported ("link type ATM_RFC1483 (11) is not supported
// (supported: ...)"), and with `strict` a damaged record.
//
// Thread-safety: loading and release() belong to one thread; the templates are read-only
// between them and may be read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/config/location.hpp"
#include "framework/capture/capture_reader.hpp"

struct rte_mbuf;

namespace tp {

struct CaptureRecord {
    const rte_mbuf* frame;  // template chain in the capture's private pool
    const uint8_t* data;    // the first segment's bytes: a replay of a one-segment frame
                            // reads only these, never the template's mbuf header
    uint32_t length;        // captured bytes, normalised to Ethernet (what is replayed)
    uint32_t wire_length;   // the frame's length on the wire (normalised likewise)
    uint16_t segments;      // template segments (1: the whole frame is at `data`)
    uint64_t offset_ns;     // replay time from the first record, gaps that go backwards or
                            // involve an invalid timestamp count as zero
    int64_t time_ns;        // the record's own timestamp (ns since the epoch), -1 when it
                            // cannot be a real time
};

class CaptureFile {
public:
    // Loads `path`; `named_at` is where the user named the file (for open errors).
    CaptureFile(const std::string& path, const Location& named_at, int socket = -1, bool strict = false);
    ~CaptureFile();
    CaptureFile(const CaptureFile&) = delete;
    CaptureFile& operator=(const CaptureFile&) = delete;

    const std::string& path() const { return path_; }
    const std::vector<CaptureRecord>& records() const { return records_; }
    uint64_t bytes() const { return bytes_; }            // sum of captured lengths
    uint32_t max_length() const { return max_length_; }  // longest record
    uint64_t duration_ns() const { return records_.empty() ? 0 : records_.back().offset_ns; }

    // Why loading stopped early ("record 3: truncated dump file; ..."), empty if it did not.
    const std::string& truncation() const { return truncation_; }
    bool truncated() const { return !truncation_.empty(); }
    // Why loading stopped at a damaged record ("record 3: invalid packet capture length ..."),
    // empty if it did not.
    const std::string& error() const { return error_; }
    const SkippedRecords& skipped() const { return skipped_; }
    // Packets the capturing interfaces said they dropped (pcapng statistics).
    uint64_t interface_drops() const { return interface_drops_; }
    // A stop was requested while loading: nothing was kept.
    bool interrupted() const { return interrupted_; }

    // Returns every template mbuf to the private pool (the pool itself lives until
    // destruction, so its accounting can still be checked). Idempotent.
    void release();
    uint32_t pool_capacity() const;
    uint32_t pool_available() const;
    uint16_t segment_room() const { return segment_room_; }  // data bytes per template segment

    // EAL memory a capture's template pool will take (MbufPool::footprint), found by reading
    // the file without loading it; lets a caller size EAL memory before starting it. Throws
    // what loading would; 0 when a stop was requested while reading.
    static uint64_t memory_needed(const std::string& path, const Location& named_at);
    // What can be known from the file's start: it exists, is readable, is a pcap or pcapng
    // capture of a supported link type (a pcapng's first record's interface). A config check,
    // cheap for any size of capture; damaged records are found while loading.
    static void check_header(const std::string& path, const Location& named_at);
    // Reads every record as `strict: true` does, throwing its LocatedError at the first
    // damaged one (`tilepipe validate --strict`: what the run would refuse, found before it).
    static void check_records(const std::string& path, const Location& named_at);

private:
    void copy_records(uint64_t count);

    std::string path_;
    std::unique_ptr<MbufPool> pool_;
    std::vector<CaptureRecord> records_;
    uint64_t bytes_ = 0;
    uint32_t max_length_ = 0;
    uint16_t segment_room_ = 0;
    std::string truncation_;
    std::string error_;
    SkippedRecords skipped_;
    uint64_t interface_drops_ = 0;
    bool interrupted_ = false;
};

}  // namespace tp
