#!/usr/bin/env bash
# bench_mapvec_scaling.sh [OUTDIR] [MAX_W]: the map study's Tables IV and V on this machine, for
# W = 1..MAX_W workers (default: 56, or the CPUs this process may use minus the emitter and the
# collector when there are fewer), every variant, interleaved repetitions.
#   Table IV: T_S, B_W and scalability for M = 56, 112, 168 (int32), with the best-over-W rows.
#   Table V:  the same with a coarser grain (--grain, extra work per row with the same memory
#             traffic; $GRAIN, default 2000 operations), the shape the study's software floats gave.
# Writes OUTDIR/table4.json, OUTDIR/table5.json and their printed tables (OUTDIR/table4.txt,
# table5.txt). Meant for a machine with a CPU per thread (W + 2 CPUs); on fewer CPUs the threads
# share them and the tree's advantage cannot show. $TILEPIPE_BIN names a tilepipe to use instead
# of building ./build/apps/tilepipe; $REPS (default 3) and $TASKS (default 20000) shorten a run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-mapvec-scaling}
die() { echo "bench_mapvec_scaling.sh: $*" >&2; exit 1; }
cpus=$(nproc)
max_w=${2:-$(( cpus - 2 < 56 ? cpus - 2 : 56 ))}
[ "$max_w" -ge 1 ] || die "needs at least 3 CPUs (this process may use $cpus)"
[ "$max_w" -le 256 ] || die "MAX_W is at most 256, got $max_w"
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe
fi
bin=${TILEPIPE_BIN:-./build/apps/tilepipe}
mkdir -p "$out"
workers=$(seq -s, 1 "$max_w")
variants=udn_tree,sm_tree,sm_linear,ring_tree,lck_queue,lock_queue
common=(--variants "$variants" --workers "$workers" --reps "${REPS:-3}" --tasks "${TASKS:-20000}")
echo "bench_mapvec_scaling.sh: W = 1..$max_w on $cpus CPUs ($(uname -n))" >&2
"$bin" bench mapvec "${common[@]}" --m 56,112,168 --json "$out/table4.json" | tee "$out/table4.txt" ||
  die "Table IV run failed"
"$bin" bench mapvec "${common[@]}" --m 56 --grain "${GRAIN:-2000}" --json "$out/table5.json" | tee "$out/table5.txt" ||
  die "Table V run failed"
echo "bench_mapvec_scaling.sh: wrote $out/table4.json and $out/table5.json" >&2
