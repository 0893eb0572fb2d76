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
count() {  # count DIR: adds the GoogleTest cases of the last `meson test` in DIR
  local log=$1/meson-logs/testlog.json
  [ -f "$log" ] || return
  local p f
  read -r p f < <(python3 - "$log" <<'PY'
import json, re, sys
passed = failed = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout") or ""
    ok = len(re.findall(r"^\[       OK \] ", out, re.M))
    bad = len(re.findall(r"^\[  FAILED  \] \S+\.\S+ \(", out, re.M))
    if t["result"] not in ("OK", "SKIP", "EXPECTEDFAIL") and bad == 0:
        bad = 1  # crashed or timed out before reporting a case
    passed += ok
    failed += bad
print(passed, failed)
PY
)
  passed=$((passed + p))
  failed=$((failed + f))
}
suite() {  # suite DIR KIND [SUITE]: builds what SUITE needs (everything when none) and runs it
  local dir=$1 kind=$2 name=${3:-}
  echo "== $kind: building $dir" >&2
  local targets=()
  if [ -n "$name" ]; then
    ./scripts/build.sh "$dir" "$kind" build.ninja || { failed=$((failed + 1)); return; }
    # Only the executables of that suite (plus the CLI the end-to-end tests drive).
    mapfile -t targets < <(meson introspect "$dir" --tests | python3 -c '
import json, os, sys
d, suite = sys.argv[1], sys.argv[2]
for t in json.load(sys.stdin):
    if any(s.endswith(suite) for s in t["suite"]):
        print(os.path.relpath(t["cmd"][0], d))
' "$dir" "$name")
    targets+=(apps/tilepipe)
  fi
  if ! ./scripts/build.sh "$dir" "$kind" "${targets[@]}"; then
    echo "== $kind: build failed" >&2
    failed=$((failed + 1))
    return
  fi
  echo "== $kind: meson test ${name:+--suite $name}" >&2
  meson test -C "$dir" --no-rebuild --print-errorlogs ${name:+--suite "$name"} >&2
  count "$dir"
}

suite build release
# Under ThreadSanitizer (5-15x slower) the stress tests push fewer items.
TILEPIPE_STRESS_ITEMS=${TILEPIPE_TSAN_STRESS_ITEMS:-2000000} suite build-tsan tsan tsan
suite build-asan asan asan

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
