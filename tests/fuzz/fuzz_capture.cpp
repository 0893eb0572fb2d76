// The capture loader (classic pcap through libpcap, pcapng through its own block reader, every
// link type it normalises) on arbitrary files: the header check `validate` runs, the memory
// survey, then a full load into templates. A load either refuses the file with a located error
// or holds records whose lengths add up, agrees with a plain reader pass over the same file
// (records and skipped records), gives every template mbuf back, and, where it stopped at a
// damaged record, is refused under `strict`.
#include <cstdint>
#include <string>

#include "framework/config/location.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_reader.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

// Records and skipped records of one CaptureReader pass (the streamed replay's reader).
struct Pass {
    uint64_t records = 0, skipped = 0;
};

Pass read_through(const std::string& path) {
    tp::CaptureReader reader(path);
    Pass p;
    for (;;) {
        switch (reader.next()) {
            case tp::CaptureReader::Next::Record: ++p.records; break;
            case tp::CaptureReader::Next::Skipped: ++p.skipped; break;
            default: return p;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tp;
    fuzz::start_eal();
    const std::string path = fuzz::scratch_file("capture", data, size);
    const Location named_at{"app.yaml", 3, 11};
    std::string damaged;
    try {
        CaptureFile::check_header(path, named_at);
        (void)CaptureFile::memory_needed(path, named_at);
        CaptureFile capture(path, named_at);
        uint64_t bytes = 0;
        for (const CaptureRecord& r : capture.records()) {
            if (r.length == 0 || r.length > capture.max_length() || r.segments == 0)
                fuzz::finding("record of " + std::to_string(r.length) + " bytes in " +
                              std::to_string(r.segments) + " segments, longest " +
                              std::to_string(capture.max_length()));
            bytes += r.length;
        }
        if (bytes != capture.bytes()) fuzz::finding("record lengths do not add up to bytes()");
        const Pass pass = read_through(path);
        if (pass.records != capture.records().size() || pass.skipped != capture.skipped().total())
            fuzz::finding("a reader pass saw " + std::to_string(pass.records) + " records and " +
                          std::to_string(pass.skipped) + " skipped, the loaded capture " +
                          std::to_string(capture.records().size()) + " and " +
                          std::to_string(capture.skipped().total()));
        capture.release();
        if (capture.pool_available() != capture.pool_capacity()) fuzz::finding("templates not returned to the pool");
        damaged = capture.error();
    } catch (const LocatedError&) {
        return 0;  // refused, naming the file and the record: what a user sees
    }
    if (!damaged.empty()) {
        try {
            CaptureFile strict(path, named_at, -1, true);
            fuzz::finding("strict load accepted a capture the default load stopped at: " + damaged);
        } catch (const LocatedError&) {
        }
    }
    return 0;
}
