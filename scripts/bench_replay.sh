#!/usr/bin/env bash
# bench_replay.sh [REPS] [SECONDS]: replay speed of `tilepipe run conf/forward.yaml` (pcap source
# -> drop sink) against dpdk-testpmd in io forwarding mode reading the same capture through the
# net_pcap PMD (infinite_rx=1) into net_null (no-rx=1), on 64-byte and 1514-byte captures.
# Runs are interleaved (tilepipe, testpmd, tilepipe, ...) so host drift hits both alike; prints
# median, min and max Mpps of each and the ratio of the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5} secs=${2:-5}
./scripts/bootstrap.sh dpdk-dev  # dpdk-testpmd
./scripts/build.sh build release
bin=./build/apps/tilepipe
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.3f %.3f %.3f\n", m, a[1], a[NR]}'; }

for size in 64 1514; do
  cap=$work/$size.pcap
  $bin run conf/gen.yaml --quiet --set synth.size=$size --set synth.count=100k --set out.file="$cap" >/dev/null
  loops=$(( size == 64 ? 400 : 100 ))
  : >"$work/tp" ; : >"$work/pmd"
  for _ in $(seq "$reps"); do
    $bin run conf/forward.yaml --quiet --pcap "$cap" --loop $loops --json "$work/r.json" >/dev/null
    python3 -c "import json;print(json.load(open('$work/r.json'))['mpps'])" >>"$work/tp"
    # Rx-pps of port 0 (net_pcap) from testpmd's periodic statistics, after the first period.
    timeout -s INT "$secs" dpdk-testpmd --no-huge -m 1024 --no-pci --no-shconf --no-telemetry \
        --log-level='*:warning' --vdev "net_pcap0,rx_pcap=$cap,infinite_rx=1" --vdev 'net_null0,no-rx=1' \
        -- --forward-mode=io --auto-start --stats-period=1 --nb-cores=1 >"$work/pmd.log" 2>&1 || true
    awk '/NIC statistics for port 0/ {p=1} p && /Rx-pps:/ {print $2; p=0}' "$work/pmd.log" | awk '$1 > 0' \
      | median | awk '{print $1 / 1e6}' >>"$work/pmd"
  done
  read -r tm tmin tmax < <(median <"$work/tp")
  read -r pm pmin pmax < <(median <"$work/pmd")
  printf "%5d B  tilepipe %7.3f Mpps (min %.3f, max %.3f)  testpmd %7.3f Mpps (min %.3f, max %.3f)  ratio %.2f\n" \
    "$size" "$tm" "$tmin" "$tmax" "$pm" "$pmin" "$pmax" "$(echo "$tm / $pm" | bc -l)"
done
