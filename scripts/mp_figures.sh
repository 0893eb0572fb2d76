#!/usr/bin/env bash
# mp_figures.sh OUTDIR [RANKS...]: the Epiphany study's Figs. 3-6 on this host: each of the four
# message-passing kernels (study style) over a range of problem sizes, on the tiles backend and
# on Open MPI, for each rank count (default 1 4 16; 16 tiles ranks on --topology epiphany16).
# Writes OUTDIR/json/mpfig_KERNEL_BACKEND_RANKS.json (`tilepipe bench mp-KERNEL --sizes`
# reports), OUTDIR/json/mpfig_KERNEL_{gflops,comm}.json (`scaling` reports: GFLOPS and the
# share of time communicating against size, a series per backend and rank count) and their
# pictures OUTDIR/png/*.png (`tilepipe plot`). SMALL=1 shrinks the sizes to a few seconds.
# $TILEPIPE_BIN names the program (default: this tree's build). Exit status 1 when a run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: mp_figures.sh OUTDIR [RANKS...]" >&2; exit 2; }
out=$1
shift
ranks=${*:-1 4 16}
T=${TILEPIPE_BIN:-./build/apps/tilepipe}
mkdir -p "$out/json" "$out/png"
log=$out/mp_figures.log
failed=0
# Sizes as the study swept them (multiples of 16 ranks' grids, powers of two for the FFT).
if [ -n "${SMALL:-}" ]; then
  sizes=(sgemm:32,64 stencil:32,64 nbody:64,128 fft:32,64)
else
  sizes=(sgemm:128,256,512,1024 stencil:128,256,512,1024,2048 nbody:1024,2048,4096,8192,16384 fft:128,256,512,1024)
fi
for ks in "${sizes[@]}"; do
  k=${ks%%:*}
  for r in $ranks; do
    for b in tiles mpi; do
      topo=()
      [ "$b" = tiles ] && [ "$r" = 16 ] && topo=(--topology epiphany16)
      echo "\$ $T bench mp-$k --backend $b --ranks $r --sizes ${ks#*:} ${topo[*]}" >>"$log"
      timeout 900 "$T" bench "mp-$k" --backend "$b" --ranks "$r" --sizes "${ks#*:}" "${topo[@]}" \
        --json "$out/json/mpfig_${k}_${b}_$r.json" >>"$log" 2>&1 || { echo "[failed: exit $?]" >>"$log"; failed=$((failed + 1)); }
    done
  done
  for y in gflops comm_share; do
    python3 - "$out/json" "$k" "$y" <<'PY'
import glob, json, os, sys
d, kernel, y = sys.argv[1:4]
rows = []
for f in sorted(glob.glob(os.path.join(d, f"mpfig_{kernel}_*_*.json"))):
    rep = json.load(open(f))
    for r in rep["rows"]:
        rows.append({"series": f"{rep['backend']} {rep['ranks']} ranks", "size": r["size"], y: r[y]})
what = "GFLOPS" if y == "gflops" else "share of time communicating"
json.dump({"bench": "scaling", "title": f"mp-{kernel} (study style): {what} against size", "x": "size", "y": y,
           "xlabel": "size", "ylabel": what, "rows": rows},
          open(os.path.join(d, f"mpfig_{kernel}_{y}.json"), "w"), indent=1)
PY
    "$T" plot "$out/json/mpfig_${k}_$y.json" -o "$out/png/mpfig_${k}_$y.png" >>"$log" 2>&1 || failed=$((failed + 1))
  done
done
echo "mp_figures: $failed failed (log: $log)"
[ "$failed" -eq 0 ]
