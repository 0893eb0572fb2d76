// The capture loader (pcap and pcapng, every link type it normalises) on arbitrary files: the
// header check `validate` runs, the memory survey, then a full load into templates. A load
// either refuses the file with a located error or holds records whose lengths add up, and
// gives every template mbuf back.
#include <cstdint>
#include <string>

#include "framework/config/location.hpp"
#include "stages/capture_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tp;
    fuzz::start_eal();
    const std::string path = fuzz::scratch_file("capture", data, size);
    const Location named_at{"app.yaml", 3, 11};
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
        capture.release();
        if (capture.pool_available() != capture.pool_capacity()) fuzz::finding("templates not returned to the pool");
    } catch (const LocatedError&) {
        // refused, naming the file and the record: what a user sees
    }
    return 0;
}
