#!/usr/bin/env bash
# bench_scaling.sh OUTDIR [SECTION...]: every scaling measurement in one command, for a
# many-core host (one CPU per tile) or, shrunk, for a small one. Sections, in this order by
# default: farm fig12 mapvec accel mp channels apps.
#   farm      conf/bench/farm_pass.yaml (the links' cost) and conf/bench/farm_ids.yaml (compute
#             bound) for W workers on ring, sm and udn: Mpps and the collector's ns per packet
#   fig12     scripts/bench_fig12.sh: one active worker of W, the collector's ns per packet
#   mapvec    the map benchmark's Tables IV (int) and V (--grain) over W, every variant
#   accel     the accelerator against FastFlow (blocking and spinning), 1 us and tiny tasks;
#             the FastFlow study's Figs. 6, 9 and 7 (ff-grain, ff-matmul, ff-homing) over W
#   mp        the message-passing kernels (sgemm, stencil, nbody, fft) on 1, 4 and 16 ranks;
#             mp-shift on the most ranks; scripts/mp_figures.sh (size sweeps, both backends);
#             on 16: mp-stencil as 16 x 1, 8 x 2 and 4 x 4 ranks x tiles (hybrid), 15 runs each
#   channels  pingpong, asym (1..N senders) and stream (bursts 1, 8, 32 against the peers)
#   apps      scripts/bench_apps.sh: forward, default, chain16, farm4 and l3fwd on the same
#             capture, default, farm4 and l3fwd again with runtime.prefetch=burst (interleaved:
#             the prefetch's A/B), and scripts/bench_replay.sh: forward against dpdk-testpmd's io
#             forwarding (where $TESTPMD or dpdk-testpmd is at hand)
# Writes OUTDIR/log.txt (every command and what it printed), OUTDIR/json/*.json (a bench or
# run report per measurement, and a `scaling` report per curve) and OUTDIR/png/*.png (a picture
# per curve, drawn by `tilepipe plot`). W runs over 1, 2, 4, ... up to the CPUs there are minus
# two (the source and the collector), ranks over 1, 4, 16 as far as the CPUs go.
# $TILEPIPE_BIN and $TILEPIPE_BENCH name the programs (default: this tree's build, built when
# missing); SMALL=1 shrinks every run to a few seconds (a dry run of the script itself).
# A measurement that fails is logged with its exit status and the script goes on; the closing
# line counts them and the exit status is 1 when any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench_scaling.sh OUTDIR [farm fig12 mapvec accel mp channels apps]" >&2; exit 2; }
out=$1
shift
sections=${*:-farm fig12 mapvec accel mp channels apps}
for s in $sections; do
  case $s in farm|fig12|mapvec|accel|mp|channels|apps) ;; *) echo "bench_scaling.sh: unknown section '$s'" >&2; exit 2 ;; esac
done
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe apps/bench/tilepipe-bench || exit 1
fi
T=${TILEPIPE_BIN:-./build/apps/tilepipe}
TB=${TILEPIPE_BENCH:-./build/apps/bench/tilepipe-bench}
small=${SMALL:-}
mkdir -p "$out/json" "$out/png"
log=$out/log.txt
failed=0

cpus=$(nproc)
ws=(1)
for ((w = 2; w <= cpus - 2; w *= 2)); do ws+=("$w"); done
[ $((cpus - 2)) -gt "${ws[-1]}" ] && ws+=($((cpus - 2)))
[ -n "$small" ] && ws=(1 2)
ranks=(1)
[ "$cpus" -ge 4 ] && ranks+=(4)
[ "$cpus" -ge 16 ] && ranks+=(16)
[ -n "$small" ] && ranks=(1 4)
join() { local IFS=,; echo "$*"; }

# run SECONDS CMD...: logs the command and its output; counts a failure.
run() {
  local t=$1
  shift
  echo "\$ $*" >>"$log"
  timeout "$t" "$@" >>"$log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { echo "[failed: exit $rc]" >>"$log"; failed=$((failed + 1)); }
  return $rc
}
# plot JSON: its picture under png/. Without matplotlib (a bare many-core host) the pictures
# are left out, not counted as failures: `tilepipe plot` draws them from json/ anywhere later.
# The interpreter `tilepipe plot` runs: $TILEPIPE_PYTHON, else /usr/bin/python3 (Debian's
# python3-matplotlib), else python3 on the PATH.
py=${TILEPIPE_PYTHON:-$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
have_matplotlib=$("$py" -c 'import matplotlib' 2>/dev/null && echo 1)
[ -n "$have_matplotlib" ] || echo "(no python3-matplotlib here: pictures left out; draw them later with tilepipe plot json/NAME.json)" >>"$log"
plot() { [ -z "$have_matplotlib" ] || run 60 "$T" plot "$1" -o "$out/png/$(basename "${1%.json}").png" || true; }
# curve NAME TITLE X Y XLABEL YLABEL PYTHON: a `scaling` report json/NAME.json whose rows the
# Python expression builds from `reports` (every json/*.json, by file name without .json).
curve() {
  python3 - "$out/json" "$@" <<'PY' && plot "$out/json/$1.json"
import glob, json, os, sys
d, name, title, x, y, xl, yl, expr = sys.argv[1:9]
reports = {}
for f in glob.glob(os.path.join(d, "*.json")):
    try:
        reports[os.path.basename(f)[:-5]] = json.load(open(f))
    except ValueError:
        pass
rows = [r for r in eval(expr) if r.get(y) is not None]
json.dump({"bench": "scaling", "title": title, "x": x, "y": y, "xlabel": xl, "ylabel": yl, "rows": rows},
          open(os.path.join(d, name + ".json"), "w"), indent=1)
print(f"{name}: {len(rows)} points")
PY
}

{ echo "=== $(date -u +%FT%TZ) $(uname -n): $cpus CPUs"; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)|L2|L3'; } >>"$log"

if [[ " $sections " == *" farm "* ]]; then
  echo "=== farm $(date +%T)" >>"$log"
  for w in "${ws[@]}"; do
    for tr in ring sm udn; do
      run 120 "$T" run conf/bench/farm_pass.yaml --quiet --set transport=$tr --set farm.workers=$w \
        --set synth.count=$([ -n "$small" ] && echo 200k || echo 10M) --json "$out/json/pass_${tr}_$w.json"
      # farm_ids has a parse tile more than farm_pass: one CPU per tile caps it at CPUs - 3.
      wi=$w
      [ "$cpus" -gt 4 ] && [ "$w" -gt $((cpus - 3)) ] && wi=$((cpus - 3))
      run 120 "$T" run conf/bench/farm_ids.yaml --quiet --set transport=$tr --set farm.workers=$wi \
        --set synth.count=$([ -n "$small" ] && echo 5k || echo $((150000 * wi))) --json "$out/json/ids_${tr}_$wi.json"
    done
  done
  for app in pass ids; do
    rows="[{'series': k.split('_')[1], 'workers': int(k.split('_')[2]), 'mpps': v['mpps']} for k, v in reports.items() if k.startswith('${app}_')]"
    curve "farm_${app}_mpps" "farm_$app: Mpps against workers, per transport" workers mpps workers Mpps "$rows"
    # The collector's cost per packet: the busy time of the tile that gathers the workers'
    # packets (the collector runs with the `drop` after it) over the packets delivered.
    rows="[{'series': k.split('_')[1], 'workers': int(k.split('_')[2]), 'ns_per_packet': t['busy_fraction'] * v['seconds'] * 1e9 / max(1, v['delivered'])} for k, v in reports.items() if k.startswith('${app}_') for t in v.get('tiles', []) if t.get('node') == 'drop']"
    curve "farm_${app}_collector" "farm_$app: the collector's ns per packet" workers ns_per_packet workers "ns per packet" "$rows"
  done
fi

if [[ " $sections " == *" fig12 "* ]]; then
  echo "=== fig12 $(date +%T)" >>"$log"
  TILEPIPE_BIN=$T PACKETS=$([ -n "$small" ] && echo 100k || echo 2M) run 600 scripts/bench_fig12.sh 3 "${ws[@]}"
fi

if [[ " $sections " == *" mapvec "* ]]; then
  echo "=== mapvec $(date +%T)" >>"$log"
  v=udn_tree,sm_tree,sm_linear,ring_tree,fastflow_tree,lck_queue
  run 900 "$TB" mapvec --variants $v --workers "$(join "${ws[@]}")" --m 56,112,168 --reps 3 \
    --tasks $([ -n "$small" ] && echo 500 || echo 10000) --json "$out/json/table4.json" && plot "$out/json/table4.json"
  run 900 "$TB" mapvec --variants $v --workers "$(join "${ws[@]}")" --m 56 --grain "${GRAIN:-55}" --reps 3 \
    --tasks $([ -n "$small" ] && echo 500 || echo 10000) --json "$out/json/table5.json" && plot "$out/json/table5.json"
fi

if [[ " $sections " == *" accel "* ]]; then
  echo "=== accel $(date +%T)" >>"$log"
  for w in "${ws[@]}"; do
    run 300 "$TB" accel --workers "$w" --fastflow blocking,spin --reps 3 \
      $([ -n "$small" ] && echo "--tasks 20000") --json "$out/json/accel_$w.json"
  done
  for ns in 1000 5; do
    rows="[{'series': r['impl'], 'workers': int(k.split('_')[1]), 'mtasks_per_s': r['mtasks_per_s']} for k, v in reports.items() if k.startswith('accel_') for r in v['rows'] if round(r.get('task_ns', -1)) == $ns and r.get('mode', 'stream') == 'stream']"
    curve "accel_${ns}ns" "accelerator, ${ns} ns tasks: Mtasks/s against workers" workers mtasks_per_s workers "Mtasks/s" "$rows"
  done
  # The FastFlow study's Figs. 6 (speedup against grain) and 9 (32/64/128 products).
  run 600 "$T" bench ff-grain --workers "$(join "${ws[@]}")" $([ -n "$small" ] && echo "--work-ms 20") \
    --json "$out/json/ff_grain.json" && plot "$out/json/ff_grain.json"
  run 600 "$T" bench ff-matmul --workers "$(join "${ws[@]}")" $([ -n "$small" ] && echo "--tasks 200") \
    --json "$out/json/ff_matmul.json" && plot "$out/json/ff_matmul.json"
  # Fig. 7: the same products under first_touch, local and interleave (local homing, a home
  # per task, hash-for-home); 300 tasks of their own buffers per run.
  run 600 "$T" bench ff-homing --workers "$(join "${ws[@]}")" $([ -n "$small" ] && echo "--tasks 50") \
    --json "$out/json/ff_homing.json" && plot "$out/json/ff_homing.json"
fi

if [[ " $sections " == *" mp "* ]]; then
  echo "=== mp $(date +%T)" >>"$log"
  for r in "${ranks[@]}"; do
    topo=()
    [ "$r" = 16 ] && topo=(--topology epiphany16)
    for k in sgemm:2048 stencil:4096 nbody:16384 fft:2048; do
      run 300 "$T" bench "mp-${k%%:*}" --ranks "$r" --size "$([ -n "$small" ] && echo 256 || echo "${k##*:}")" "${topo[@]}" \
        --json "$out/json/mp_${k%%:*}_$r.json"
    done
  done
  rows="[{'series': v['bench'], 'ranks': v['ranks'], 'gflops': v['gflops']} for k, v in reports.items() if k.startswith('mp_')]"
  curve mp_gflops "message-passing kernels on tiles: GFLOPS against ranks" ranks gflops ranks GFLOPS "$rows"
  # The study's shift model (Fig. 2) on the most ranks: both backends, 1D and 2D, buffers swept.
  r=${ranks[-1]}
  topo=()
  [ "$r" = 16 ] && topo=(--topology epiphany16)
  run 600 "$T" bench mp-shift --ranks "$r" "${topo[@]}" --reps "$([ -n "$small" ] && echo 50 || echo 2000)" \
    --json "$out/json/mpshift_$r.json"
  # The hybrid model at 16 tiles: 16 x 1, 8 x 2, 4 x 4 (15 runs each: the spread), and 16
  # Open MPI ranks.
  if [ "$r" = 16 ]; then
    for rt in 16:1 8:2 4:4; do
      run 900 "$T" bench mp-stencil --size "$([ -n "$small" ] && echo 64 || echo 1024)" --topology epiphany16 \
        --ranks "${rt%%:*}" --tiles-per-rank "${rt##*:}" --runs 15 --json "$out/json/mphybrid_${rt%%:*}x${rt##*:}.json"
    done
    run 900 "$T" bench mp-stencil --backend mpi --ranks 16 --size "$([ -n "$small" ] && echo 64 || echo 1024)" \
      --runs 15 --json "$out/json/mphybrid_mpi16.json"
  fi
  # Figs. 3-6: GFLOPS and communication share against size, per rank count, tiles and Open MPI.
  run 14400 env TILEPIPE_BIN="$T" ./scripts/mp_figures.sh "$out" "${ranks[@]}"
fi

if [[ " $sections " == *" channels "* ]]; then
  echo "=== channels $(date +%T)" >>"$log"
  # A dry run's round trips: few, as udn_eventdev's one-way takes milliseconds on 2 CPUs.
  it=$([ -n "$small" ] && echo 2000 || echo 100000)
  run 300 "$T" bench pingpong --reps 3 --iters "$it" --json "$out/json/pingpong.json" && plot "$out/json/pingpong.json"
  run 300 "$T" bench asym --like-pingpong --reps 3 --iters "$it" --senders "$(join "${ws[@]}")" \
    --transports sm,udn,udn_pair,ring --json "$out/json/asym.json" && plot "$out/json/asym.json"
  run 300 "$TB" stream --reps 1 --items $([ -n "$small" ] && echo 1000000 || echo 20000000) \
    --json "$out/json/stream.json" && plot "$out/json/stream.json"
fi

if [[ " $sections " == *" apps "* ]]; then
  echo "=== apps $(date +%T)" >>"$log"
  TILEPIPE_BIN=$T run 900 scripts/bench_apps.sh "$([ -n "$small" ] && echo 1 || echo 3)" \
    conf/default.yaml conf/bench/chain16.yaml conf/bench/farm4.yaml conf/l3fwd.yaml \
    conf/default.yaml:runtime.prefetch=burst conf/bench/farm4.yaml:runtime.prefetch=burst conf/l3fwd.yaml:runtime.prefetch=burst
  pmd=${TESTPMD:-$(command -v dpdk-testpmd)}
  if [ -n "$pmd" ]; then
    TESTPMD=$pmd TILEPIPE_BIN=$T run 300 scripts/bench_replay.sh "$([ -n "$small" ] && echo 1 || echo 3)" 4
  else
    echo "(no dpdk-testpmd: forward against testpmd left out)" >>"$log"
  fi
fi

echo "=== done $(date +%T): $failed measurement(s) failed" | tee -a "$log"
[ "$failed" -eq 0 ]
