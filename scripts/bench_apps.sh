#!/usr/bin/env bash
# bench_apps.sh [REPS] [CONF...]: Mpps of app configs replaying the same 64-byte capture, runs
# interleaved (forward, then each CONF, repeated) so host drift hits all alike; prints median,
# min and max of each and its ratio to conf/forward.yaml.
# Default CONFs: conf/bench/chain16.yaml conf/bench/farm4.yaml. A CONF may carry settings after
# a colon, each a --set: `conf/default.yaml:runtime.prefetch=burst,pool.cache=512` runs that
# config with them, beside the same config without (an A/B in one sitting). $TILEPIPE_BIN names a tilepipe
# to use instead of building ./build/apps/tilepipe. A run that fails or reports no Mpps ends the
# script with a message and exit status 1: no figure is ever made up.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
shift || true
confs=("${@:-conf/bench/chain16.yaml}")
[ $# -eq 0 ] && confs=(conf/bench/chain16.yaml conf/bench/farm4.yaml)
die() { echo "bench_apps.sh: $*" >&2; exit 1; }
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe
fi
bin=${TILEPIPE_BIN:-./build/apps/tilepipe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cap=$work/64.pcap
$bin run conf/gen.yaml --quiet --set synth.size=64 --set synth.count=100k --set out.file="$cap" >/dev/null \
  || die "tilepipe could not write the capture (exit $?)"
all=(conf/forward.yaml "${confs[@]}")
for _ in $(seq "$reps"); do
  for i in "${!all[@]}"; do
    rm -f "$work/r.json"
    conf=${all[$i]%%:*}
    sets=()
    if [[ ${all[$i]} == *:* ]]; then
      IFS=, read -ra kv <<<"${all[$i]#*:}"
      for s in "${kv[@]}"; do sets+=(--set "$s"); done
    fi
    $bin run "$conf" --quiet --pcap "$cap" --loop 200 ${sets[@]+"${sets[@]}"} --json "$work/r.json" >/dev/null \
      || die "tilepipe run ${all[$i]} failed (exit $?)"
    python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['mpps']; assert v > 0, v; print(v)" "$work/r.json" \
      >>"$work/$i" 2>/dev/null || die "the report of ${all[$i]} holds no Mpps above 0"
  done
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {printf "%.3f %.3f %.3f\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
read -r base _ < <(median "$work/0")
for i in "${!all[@]}"; do
  read -r m lo hi < <(median "$work/$i")
  printf "%-40s %7.3f Mpps (min %.3f, max %.3f)  %.2f x forward\n" "${all[$i]}" "$m" "$lo" "$hi" "$(awk -v m="$m" -v b="$base" 'BEGIN { print m / b }')"
done
