#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs
#  1. every unit and end-to-end test (release build),
#  2. the channel stress tests under ThreadSanitizer,
#  3. the parsers and captures (real and malformed) under AddressSanitizer + UBSan.
# Prints one closing line "tests: N passed, M failed" and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh || exit 1

passed=0 failed=0
count() {  # count DIR: adds the results of the last `meson test` in DIR
  local log=$1/meson-logs/testlog.json
  [ -f "$log" ] || return
  passed=$((passed + $(grep -c '"result": "OK"' "$log")))
  failed=$((failed + $(grep -c '"result": "\(FAIL\|TIMEOUT\|ERROR\)"' "$log")))
}
suite() {  # suite DIR KIND MESON-TEST-ARGS...
  local dir=$1 kind=$2
  shift 2
  echo "== $kind: building $dir" >&2
  if ! ./scripts/build.sh "$dir" "$kind"; then
    echo "== $kind: build failed" >&2
    failed=$((failed + 1))
    return
  fi
  echo "== $kind: meson test $*" >&2
  meson test -C "$dir" --no-rebuild --print-errorlogs "$@" >&2
  count "$dir"
}

suite build release
suite build-tsan tsan --suite stress --test-args=--gtest_brief=1
suite build-asan asan --suite asan

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
