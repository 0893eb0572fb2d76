#!/usr/bin/env bash
# bench_metrics_cost.sh [REPS]: what `--metrics` costs when Prometheus scrapes it every second.
# Top-speed Mpps of conf/default.yaml and conf/forward.yaml without and with `--metrics PORT`
# (scraped with curl once a second while the run lasts), interleaved (each round runs both apps,
# without then with, the next round with then without) so that host drift hits both alike;
# prints each run, the mean of each and the ratio. As root the runs get a real-time priority
# (chrt -f 10). Needs jq and curl; TILEPIPE_BIN overrides the
# binary, METRICS_PORT the port (19464).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TILEPIPE_BIN:-build/apps/tilepipe}
reps=${1:-3}
port=${METRICS_PORT:-19464}
rt=()
[ "$(id -u)" -eq 0 ] && rt=(chrt -f 10)
json=$(mktemp)
trap 'rm -f "$json"' EXIT
run() {  # CONF MODE EXTRA...: the delivered Mpps of one run
  local conf=$1 mode=$2
  shift 2
  if [ "$mode" = on ]; then
    "${rt[@]}" "$bin" run "$conf" --quiet --json "$json" --metrics "$port" "$@" >/dev/null 2>&1 &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/metrics" || true
      sleep 1
    done
    wait "$pid"
  else
    "${rt[@]}" "$bin" run "$conf" --quiet --json "$json" "$@" >/dev/null 2>&1
  fi
  jq -r .mpps "$json"
}
mean() { awk '{s += $1} END {print s / NR}'; }
declare -A runs  # APP/MODE -> the Mpps of its runs
for rep in $(seq "$reps"); do
  for app in default forward; do
    extra=(--set synth.count=30M)
    [ "$app" = forward ] && extra=(--loop 6000)
    order=(off on)
    [ $((rep % 2)) = 0 ] && order=(on off)
    for mode in "${order[@]}"; do runs[$app/$mode]+="$(run conf/$app.yaml $mode "${extra[@]}") "; done
  done
done
for app in default forward; do
  mo=$(printf '%s\n' ${runs[$app/off]} | mean)
  mm=$(printf '%s\n' ${runs[$app/on]} | mean)
  echo "$app without: ${runs[$app/off]}"
  echo "$app --metrics: ${runs[$app/on]}"
  awk -v a="$app" -v o="$mo" -v m="$mm" 'BEGIN {printf "%s: mean without %.3f Mpps, with --metrics %.3f Mpps, ratio %.3f\n", a, o, m, m / o}'
done
