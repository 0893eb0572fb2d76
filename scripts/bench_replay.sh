#!/usr/bin/env bash
# bench_replay.sh [REPS] [SECONDS]: replay speed of `tilepipe run conf/forward.yaml` (pcap source
# -> drop sink) against dpdk-testpmd in io forwarding mode reading the same capture through the
# net_pcap PMD (infinite_rx=1) into net_null (no-rx=1), on 64-byte and 1514-byte captures.
# Runs are interleaved (testpmd, tilepipe, testpmd, ...) so host drift hits both alike; prints
# median, min and max Mpps of each and the ratio of the medians.
# $TESTPMD names the testpmd binary (default dpdk-testpmd); $TILEPIPE_BIN a tilepipe to use
# instead of building ./build/apps/tilepipe. A peer or run that fails to start or prints no
# figure ends the script with a message and exit status 1: no figure is ever made up.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5} secs=${2:-5}
testpmd=${TESTPMD:-dpdk-testpmd}
die() { echo "bench_replay.sh: $*" >&2; exit 1; }
# Debian's `dpdk-dev` package holds dpdk-testpmd; a TESTPMD of one's own needs nothing installed.
[ -n "${TESTPMD:-}" ] || ./scripts/bootstrap.sh dpdk-dev || die "could not install dpdk-dev (for dpdk-testpmd)"
command -v "$testpmd" >/dev/null || die "testpmd '$testpmd' not found (set TESTPMD or install dpdk-dev)"
if [ -z "${TILEPIPE_BIN:-}" ]; then
  ./scripts/build.sh build release apps/tilepipe
fi
bin=${TILEPIPE_BIN:-./build/apps/tilepipe}
# A bundle (scripts/bundle.sh) on a host without DPDK names its drivers' folder; testpmd loads it too.
drivers=()
[ -n "${TILEPIPE_EAL_DRIVERS:-}" ] && drivers=(-d "$TILEPIPE_EAL_DRIVERS")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.3f %.3f %.3f\n", m, a[1], a[NR]}'; }
# mpps FILE: the report's Mpps, refused when missing or not above zero.
mpps() {
  python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['mpps']; assert v > 0, v; print(v)" "$1" 2>/dev/null \
    || die "tilepipe's report $1 holds no Mpps above 0"
}

for size in 64 1514; do
  cap=$work/$size.pcap
  $bin run conf/gen.yaml --quiet --set synth.size=$size --set synth.count=100k --set out.file="$cap" >/dev/null \
    || die "tilepipe could not write the $size-byte capture (exit $?)"
  loops=$(( size == 64 ? 400 : 100 ))
  : >"$work/tp" ; : >"$work/pmd"
  for _ in $(seq "$reps"); do
    # Rx-pps of port 0 (net_pcap) from testpmd's periodic statistics, after the first period.
    # timeout ends it with SIGINT (exit 124); any other status means it failed on its own.
    status=0
    timeout -s INT "$secs" "$testpmd" --no-huge -m 1024 --no-pci --no-shconf --no-telemetry ${drivers[@]+"${drivers[@]}"} \
        --log-level='*:warning' --vdev "net_pcap0,rx_pcap=$cap,infinite_rx=1" --vdev 'net_null0,no-rx=1' \
        -- --forward-mode=io --auto-start --stats-period=1 --nb-cores=1 >"$work/pmd.log" 2>&1 || status=$?
    if [ "$status" -ne 124 ]; then
      tail -5 "$work/pmd.log" >&2
      die "testpmd ($testpmd) exited with status $status before its ${secs} s were up: it did not run"
    fi
    figure=$(awk '/NIC statistics for port 0/ {p=1} p && /Rx-pps:/ {print $2; p=0}' "$work/pmd.log" | awk '$1 > 0' \
      | median | awk '$1 > 0 {print $1 / 1e6}')
    if [ -z "$figure" ]; then
      tail -5 "$work/pmd.log" >&2
      die "testpmd ($testpmd) printed no Rx-pps above 0 in ${secs} s (try more SECONDS)"
    fi
    echo "$figure" >>"$work/pmd"
    rm -f "$work/r.json"
    $bin run conf/forward.yaml --quiet --pcap "$cap" --loop $loops --json "$work/r.json" >/dev/null \
      || die "tilepipe run conf/forward.yaml failed (exit $?)"
    mpps "$work/r.json" >>"$work/tp"
  done
  read -r tm tmin tmax < <(median <"$work/tp")
  read -r pm pmin pmax < <(median <"$work/pmd")
  printf "%5d B  tilepipe %7.3f Mpps (min %.3f, max %.3f)  testpmd %7.3f Mpps (min %.3f, max %.3f)  ratio %.2f\n" \
    "$size" "$tm" "$tmin" "$tmax" "$pm" "$pmin" "$pmax" "$(awk -v a="$tm" -v b="$pm" 'BEGIN {print a / b}')"
done
