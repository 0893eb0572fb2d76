#!/usr/bin/env bash
# bench_stream.sh [REPS]: a large capture replayed preloaded against streamed from its file, by
# `tilepipe run conf/forward.yaml` (pcap source -> drop sink), on a 64-byte and a 1514-byte
# capture of about 240 MB each, the capture looped twice. Runs are interleaved (preload,
# stream, preload, ...) so host drift hits both alike. Prints, for each mode, the median (min-max)
# of the report's Mpps (the replay only, after loading), the whole command's wall time (loading
# included) and its peak resident memory.
# $TILEPIPE_BIN names a tilepipe to use instead of building ./build/apps/tilepipe. A run that fails
# or reports no figure ends the script with a message and exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
die() { echo "bench_stream.sh: $*" >&2; exit 1; }
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe
fi
bin=${TILEPIPE_BIN:-./build/apps/tilepipe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# measure OUT CMD...: runs CMD, appends "mpps wall_s peak_MB" to OUT.
measure() {
  local out=$1; shift
  python3 - "$work/r.json" "$@" >>"$out" <<'PY' || die "run failed: ${*}"
import json, resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL)
wall = time.monotonic() - t
if rc != 0:
    sys.exit(rc)
mpps = json.load(open(sys.argv[1]))["mpps"]
assert mpps > 0, mpps
print(f"{mpps:.3f} {wall:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}
# summary FILE: median (min-max) of each column.
summary() {
  for col in 1 2 3; do
    cut -d' ' -f$col "$1" | sort -g | awk '{a[NR]=$1} END {printf "%s (%s-%s)  ", a[int((NR+1)/2)], a[1], a[NR]}'
  done
  echo
}

for size in 64 1514; do
  cap=$work/$size.pcap
  count=$(( size == 64 ? 3000000 : 160000 ))
  $bin run conf/gen.yaml --quiet --set synth.size=$size --set synth.count=$count --set out.file="$cap" >/dev/null \
    || die "tilepipe could not write the $size-byte capture"
  : >"$work/preload"; : >"$work/stream"
  for _ in $(seq "$reps"); do
    for mode in preload stream; do
      flag=$([ $mode = preload ] && echo true || echo false)
      measure "$work/$mode" "$bin" run conf/forward.yaml --quiet --pcap "$cap" --loop 2 \
        --set src.preload=$flag --json "$work/r.json"
    done
  done
  echo "$size B, $(( $(stat -c %s "$cap") / 1000000 )) MB capture, 2 loops: Mpps  wall s  peak MB"
  echo "  preload: $(summary "$work/preload")"
  echo "  stream:  $(summary "$work/stream")"
done
