// A `rewrite` (NAT) rules file: parsed and opened as a run does, then rewriting a burst of
// IPv4, IPv6 and non-IP packets.
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tp::fuzz::exercise_stage_file("rewrite", "rules", {}, data, size);
    return 0;
}
