// An `acl` rules file: parsed as `validate` does, built into DPDK rte_acl contexts as a run
// does, then classifying a burst of IPv4, IPv6 and non-IP packets.
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tp::fuzz::exercise_stage_file("acl", "rules", {{"default", "deny"}}, data, size);
    return 0;
}
