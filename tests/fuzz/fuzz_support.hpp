// What the libFuzzer targets share: EAL started once per process, a scratch file the input is
// written to (the code under test reads files by name), and a stage opened on a rules file and
// run over a few packets.
//
// A target accepts the input when the code under test either works or refuses it with
// LocatedError, the one error the tools report to users. Anything else (another exception, a
// crash, a sanitizer report, an mbuf not returned to its pool) ends the run as a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tp::fuzz {

// Starts EAL without hugepages or PCI (once; later calls return at once) and silences the
// logs a rejected input would print on every run.
void start_eal();

// This process's own folder under $TMPDIR (fuzzers side by side never share a file), removed
// when the fuzzer exits normally; a finding leaves it for inspection.
const std::string& scratch_dir();

// Writes the input to `name` in the scratch folder (a relative path, its folders existing) and
// returns its path.
std::string scratch_file(const std::string& name, const uint8_t* data, size_t size);

// Ends the run as a finding (abort) with `what` on stderr: a broken promise of the code
// under test that did not crash by itself.
[[noreturn]] void finding(const std::string& what);

using Given = std::vector<std::pair<std::string, std::string>>;

// The input as the file parameter `key` of `stage` (other parameters from `given`, the rest
// defaulted), checked as `validate` checks it, then opened as a run opens it and fed a burst
// of parsed IPv4, IPv6 and non-IP packets; every mbuf must be back in its pool afterwards.
void exercise_stage_file(const std::string& stage, const std::string& key, const Given& given,
                         const uint8_t* data, size_t size);

}  // namespace tp::fuzz
