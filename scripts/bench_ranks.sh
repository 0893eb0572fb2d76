#!/usr/bin/env bash
# bench_ranks.sh [REPS] [COUNT]: an app split over processes against the same app in one,
# interleaved (each round runs every case once) so host drift hits all alike. Prints the median,
# min and max Mpps delivered at the sinks of each case and its ratio to its one-process case.
#   forward, 64 B and 1514 B frames (synth -> drop, conf/bench/forward_synth.yaml):
#     1p      one process;
#     mpi     the drop on rank 1 under `mpirun -np 2`: one host, so rank 0 lends rank 1 its
#             packets through memory Open MPI shares between them (MPI_Win_allocate_shared);
#     msg     the same with `runtime.rank_links: messages`: copied into MPI messages, as
#             between hosts (over Open MPI's shared-memory transport here);
#     memif   synth -> port_out in one process, port -> drop in another (conf/memif_*.yaml).
#   farm (synth 1514 B -> parse -> farm of payload_match -> drop, conf/bench/farm_ids.yaml):
#     1p      every worker in one process;
#     mpi     the workers spread over ranks 0 and 1 under `mpirun -np 2`.
# COUNT packets per run (default 2M). $TILEPIPE_BIN names a tilepipe to use instead of building
# ./build/apps/tilepipe. A run that fails or reports no Mpps ends the script with a message and
# exit status 1: no figure is ever made up.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
count=${2:-2M}
die() { echo "bench_ranks.sh: $*" >&2; exit 1; }
command -v mpirun >/dev/null || die "mpirun not found (Debian: apt-get install openmpi-bin)"
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe
fi
bin=${TILEPIPE_BIN:-./build/apps/tilepipe}
mpi=(mpirun -np 2 --oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sock=$work/memif.sock

mpps() { python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['mpps']; assert v > 0, v; print(v)" "$1" 2>/dev/null \
  || die "the report $2 holds no Mpps above 0"; }
# case NAME: one run of that case, its Mpps appended to $work/NAME
one() {
  local name=$1 size=${1#*-}; size=${size%%-*}
  rm -f "$work/r.json" "$work/t.json"
  case $name in
    fwd-*-1p)  $bin run conf/bench/forward_synth.yaml --quiet --set synth.size="$size" --set synth.count="$count" \
                 --json "$work/r.json" >/dev/null || die "$name failed" ;;
    fwd-*-mpi) "${mpi[@]}" $bin run conf/bench/forward_synth.yaml --quiet --set synth.size="$size" --set synth.count="$count" \
                 --set drop.rank=1 --json "$work/r.json" >/dev/null || die "$name failed" ;;
    fwd-*-msg) "${mpi[@]}" $bin run conf/bench/forward_synth.yaml --quiet --set synth.size="$size" --set synth.count="$count" \
                 --set drop.rank=1 --set runtime.rank_links=messages --json "$work/r.json" >/dev/null || die "$name failed" ;;
    fwd-*-memif)
      local dev="net_memif0,role=server,socket=$sock" cdev="net_memif0,role=client,socket=$sock"
      # DPDK's memif driver logs its connection attempts: kept aside, shown when a side fails.
      $bin run conf/memif_rx.yaml --quiet --set "port.device=$cdev" --set port.packets="$count" --json "$work/r.json" \
        >/dev/null 2>"$work/rx.log" &
      local rx=$!
      $bin run conf/memif_tx.yaml --quiet --set "port_out.device=$dev" --set synth.size="$size" --set synth.count="$count" \
        --json "$work/t.json" >/dev/null 2>"$work/tx.log" || { wait $rx; cat "$work/tx.log" >&2; die "$name (sender) failed"; }
      wait $rx || { cat "$work/rx.log" >&2; die "$name (receiver) failed"; } ;;
    farm-1p)   $bin run conf/bench/farm_ids.yaml --quiet --set synth.count="$count" --json "$work/r.json" >/dev/null || die "$name failed" ;;
    farm-mpi)  "${mpi[@]}" $bin run conf/bench/farm_ids.yaml --quiet --set synth.count="$count" --set 'farm.ranks=[0,1]' \
                 --json "$work/r.json" >/dev/null || die "$name failed" ;;
  esac
  mpps "$work/r.json" "$name" >>"$work/$name"
}
cases=(fwd-64-1p fwd-64-mpi fwd-64-msg fwd-64-memif fwd-1514-1p fwd-1514-mpi fwd-1514-msg fwd-1514-memif farm-1p farm-mpi)
for _ in $(seq "$reps"); do for c in "${cases[@]}"; do one "$c"; done; done
median() { sort -g "$1" | awk '{a[NR]=$1} END {printf "%.3f %.3f %.3f\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
for c in "${cases[@]}"; do
  read -r m lo hi < <(median "$work/$c")
  base=${c%-*}-1p
  [ "$c" = farm-mpi ] && base=farm-1p
  read -r b _ < <(median "$work/$base")
  printf "%-16s %8.3f Mpps (min %.3f, max %.3f)  %.2f x %s\n" "$c" "$m" "$lo" "$hi" "$(awk -v m="$m" -v b="$b" 'BEGIN { print m / b }')" "$base"
done
