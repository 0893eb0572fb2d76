#!/usr/bin/env bash
# bench_latency_cost.sh [REPS]: what measuring latency costs. Top-speed Mpps of conf/default.yaml
# and conf/forward.yaml with `--latency off` and with the default sampling (`sample 64`),
# interleaved (off, sample, off, sample, ...) so that host drift hits both alike; prints each
# run and the median of each, and the ratio. As root the runs get a real-time priority
# (chrt -f 10), so that other processes on the machine do not land in one run and not the
# next. Needs jq; TILEPIPE_BIN overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TILEPIPE_BIN:-build/apps/tilepipe}
reps=${1:-7}
rt=()
[ "$(id -u)" -eq 0 ] && rt=(chrt -f 10)
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
run() {  # CONF MODE EXTRA...: the delivered Mpps of one run
  local conf=$1 mode=$2
  shift 2
  "${rt[@]}" "$bin" run "$conf" --quiet --latency "$mode" --json - "$@" 2>/dev/null | jq -r .mpps
}
for app in default forward; do
  extra=()
  [ "$app" = default ] && extra=(--set synth.count=10M)
  [ "$app" = forward ] && extra=(--loop 400)
  off=() on=()
  for _ in $(seq "$reps"); do
    off+=("$(run conf/$app.yaml off "${extra[@]}")")
    on+=("$(run conf/$app.yaml "sample 64" "${extra[@]}")")
  done
  mo=$(printf '%s\n' "${off[@]}" | median)
  ms=$(printf '%s\n' "${on[@]}" | median)
  echo "$app off:       ${off[*]}"
  echo "$app sample 64: ${on[*]}"
  awk -v a="$app" -v o="$mo" -v s="$ms" 'BEGIN {printf "%s: median off %.3f Mpps, sample 64 %.3f Mpps, ratio %.3f\n", a, o, s, s / o}'
done
