#!/usr/bin/env bash
# bench_fig12.sh [REPS] [WORKERS...]: the study's Fig. 12 from an app. A farm of W workers where
# one worker is active (one flow, dispatched by flow hash: every packet to one worker) runs with
# its links on `sm` (the collector scans one interface per worker) and on `udn` (the app's
# messaging network: the collector pops one queue, the asymmetric interface), W = 1, 2, 4, 8,
# 16 by default, runs interleaved (sm, udn, sm, ...). Prints per W the collector's cost per
# packet (its tile's busy time over the packets it passed, ns; median (min-max) over REPS,
# default 3): flat in W for udn, growing for sm. Every link has the K the network gives a
# collector of the most workers (128/(3W), rounded down to a power of two), on both transports.
# $TILEPIPE_BIN names a tilepipe to use instead of building ./build/apps/tilepipe; $PACKETS
# (default 2M) sets the packets per run. A run that fails ends the script with status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
shift || true
workers=("$@")
[ ${#workers[@]} -gt 0 ] || workers=(1 2 4 8 16)
die() { echo "bench_fig12.sh: $*" >&2; exit 1; }
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe
fi
bin=${TILEPIPE_BIN:-./build/apps/tilepipe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/fig12.yaml" <<EOF
app: fig12
runtime: { fuse: never }
pipeline:
  - { stage: synth, count: ${PACKETS:-2M}, flows: 1 }
  - farm:
      name: f
      workers: 1
      dispatch: flow_hash
      worker: [pass]
  - drop
EOF

# One K for every run and both transports: what the network's 128-word queues give a collector
# of the most workers (K <= 128/(3W) for descriptors), so that only the receive differs.
max_w=$(printf "%s\n" "${workers[@]}" | sort -n | tail -1)
bound=$(( 128 / (3 * max_w) ))
[ "$bound" -ge 1 ] || die "at most 42 workers: the collector's queue holds K >= 1 for each"
k=1
while (( k * 2 <= bound )); do k=$(( k * 2 )); done  # a link's queue is a power of two

# cost TRANSPORT W: the collector's ns per packet in one run.
cost() {
  "$bin" run "$work/fig12.yaml" --quiet --set transport="$1" --set f.workers="$2" --set queue="$k" \
    --json "$work/r.json" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; die "run with transport $1, $2 workers failed"; }
  python3 - "$work/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = next(t for t in r["tiles"] if t["node"] == "f.collector")
assert c["packets"] > 0 and r["seconds"] > 0, c
print(f'{c["busy_fraction"] * r["seconds"] * 1e9 / c["packets"]:.2f}')
PY
}
for w in "${workers[@]}"; do : >"$work/sm.$w"; : >"$work/udn.$w"; done
for ((i = 0; i < reps; i++)); do
  for w in "${workers[@]}"; do
    for t in sm udn; do cost "$t" "$w" >>"$work/$t.$w"; done
  done
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {printf "%s (%s-%s)", a[int((NR+1)/2)], a[1], a[NR]}'; }
printf "collector ns per packet, one active worker of W, K = %d (median (min-max) of %d runs)\n" "$k" "$reps"
printf "%-4s %-24s %-24s\n" W sm udn
for w in "${workers[@]}"; do
  printf "%-4s %-24s %-24s\n" "$w" "$(median "$work/sm.$w")" "$(median "$work/udn.$w")"
done
