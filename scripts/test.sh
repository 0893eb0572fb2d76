#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs
#  1. every unit and end-to-end test (release build),
#  2. the channel stress tests under ThreadSanitizer,
#  3. the parsers and captures (real and malformed) under AddressSanitizer + UBSan (clang),
#  4. each libFuzzer target (tests/fuzz, in that same build) for $TILEPIPE_FUZZ_SECONDS (20 here) on its
#     corpus: a target that finds a crash fails.
# Prints one line per build ("release: N passed, M failed, K skipped", distinct cases counted
# by scripts/count_tests.py), each after a line per case it skipped with the reason ("release:
# skipped NAME: REASON"), then the closing line "tests: N passed, M failed" (the totals), and
# exits non-zero on any failure. A skip tests/expected_skips.txt does not list is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh || exit 1

passed=0 failed=0
summaries=()
# The counter itself is checked first: a wrong count would make the closing line lie.
if ! python3 scripts/count_tests_test.py >&2; then
  echo "== count_tests.py fails its own test" >&2
  failed=$((failed + 1))
fi
count() {  # count DIR KIND: adds the distinct cases of the last `meson test` in DIR
  local log=$1/meson-logs/testlog.json line p f notes skips=()
  # suite() removes the log first: none means the suite selected no test, which is a failure.
  if [ ! -s "$log" ]; then
    summaries+=("$2: no test ran")
    failed=$((failed + 1))
    return
  fi
  notes=$(mktemp)
  # A skip tests/expected_skips.txt does not list counts as a failure.
  if ! line=$(python3 scripts/count_tests.py "$2" "$log" tests/expected_skips.txt 2>"$notes"); then
    cat "$notes" >&2
    rm -f "$notes"
    failed=$((failed + 1))
    return
  fi
  mapfile -t skips <"$notes"
  rm -f "$notes"
  summaries+=("${skips[@]}" "$line")
  [[ $line =~ :\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]] || { failed=$((failed + 1)); return; }
  p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
  passed=$((passed + p))
  failed=$((failed + f))
}
suite() {  # suite DIR KIND [SUITE]: builds what SUITE needs (everything when none) and runs it
  local dir=$1 kind=$2 name=${3:-}
  echo "== $kind: building $dir (at ${SECONDS} s)" >&2
  local targets=()
  if [ -n "$name" ]; then
    ./scripts/build.sh "$dir" "$kind" build.ninja || { failed=$((failed + 1)); return; }
    # Only the executables of that suite and what they depend on (the CLIs the end-to-end
    # tests drive).
    mapfile -t targets < <(meson introspect "$dir" --tests --targets | python3 -c '
import json, os, sys
d, suite = sys.argv[1], sys.argv[2]
info = json.load(sys.stdin)
files = {t["id"]: f for t in info["targets"] for f in t["filename"]}
wanted = set()
for t in info["tests"]:
    if any(s.endswith(suite) for s in t["suite"]):
        if t["cmd"][0] in files.values():  # not an interpreter running a script
            wanted.add(t["cmd"][0])
        wanted.update(files[i] for i in t.get("depends", []) if i in files)
for f in sorted(wanted):
    print(os.path.relpath(f, d))
' "$dir" "$name")
  fi
  if ! ./scripts/build.sh "$dir" "$kind" "${targets[@]}"; then
    echo "== $kind: build failed" >&2
    summaries+=("$kind: build failed")
    failed=$((failed + 1))
    return
  fi
  echo "== $kind: meson test ${name:+--suite $name} (at ${SECONDS} s)" >&2
  rm -f "$dir/meson-logs/testlog.json"  # a run that selects nothing writes none (see count)
  meson test -C "$dir" --no-rebuild --print-errorlogs ${name:+--suite "$name"} >&2
  count "$dir" "$kind"
}

suite build release
# Under ThreadSanitizer (5-15x slower) the stress tests push fewer items.
TILEPIPE_STRESS_ITEMS=${TILEPIPE_TSAN_STRESS_ITEMS:-2000000} suite build-tsan tsan tsan
suite build-asan asan asan
# The same build: its fuzz targets, each its corpus and then 20 s of new inputs (30 s by default
# elsewhere; two at a time, 20 s keeps the whole command within 25 minutes on 2 CPUs; long
# runs: README's Fuzzing).
TILEPIPE_FUZZ_SECONDS=${TILEPIPE_FUZZ_SECONDS:-20} suite build-asan fuzz fuzz

# One line per build (a case run under several builds counts in each), then the totals.
[ ${#summaries[@]} -gt 0 ] && printf '%s\n' "${summaries[@]}"
echo "== all builds and suites took ${SECONDS} s" >&2
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
