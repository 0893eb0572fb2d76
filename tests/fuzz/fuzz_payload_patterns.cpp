// A `payload_match` patterns file: parsed and compiled into its Aho-Corasick automaton as a
// run does, then searching a burst of packets (case-insensitively, dropping non-matching ones,
// so both the automaton's folding and the drop path run).
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tp::fuzz::exercise_stage_file("payload_match", "patterns", {{"nocase", "true"}, {"mode", "keep_matching"}}, data,
                                  size);
    return 0;
}
