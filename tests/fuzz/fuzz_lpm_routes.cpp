// An `lpm_route` routes file: parsed as `validate` does, loaded into rte_lpm / rte_lpm6 as a
// run does, then routing a burst of IPv4, IPv6 and non-IP packets.
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tp::fuzz::exercise_stage_file("lpm_route", "routes", {{"default_port", "3"}}, data, size);
    return 0;
}
