// `tilepipe bench NAME ...`: channel micro-benchmarks (pingpong, stream, asym).
//
// argv[0] is "bench", argv[1] the bench name; the rest are its options (`--help` lists them).
// Every bench repeats each measurement (--reps, at least 5 by default), interleaving the
// cases' repetitions (A B C ... A B C ...) so that host drift hits all alike, and reports the
// median with min and max: a table on stdout, and with `--json OUT` a file
// {"bench": NAME, "rows": [...]}. Returns a process exit status.
#pragma once

namespace tp::bench {

int main(int argc, char** argv);

}  // namespace tp::bench
