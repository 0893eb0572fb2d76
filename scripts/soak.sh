#!/usr/bin/env bash
# soak.sh MINUTES: runs a stateful app for MINUTES and checks that it stays flat.
#
# The app is the firewall's (conf/firewall.yaml): parse, a flow_hash farm of 4 workers each
# running acl (conf/data/firewall.rules) and flow_table with an idle timeout of 2 ms, so the
# replay of the capture (--loop 0: until stopped) creates and expires every flow again on each
# loop; its output goes to a `drop` sink (a capture would fill the disk). Every 5 s it samples
#   - the process's resident memory (VmRSS),
#   - the live flows in the flow tables (new_flow - expired, from --stats-interval lines),
#   - the mbufs in use in the app's pool (telemetry: /tilepipe/stats),
# then stops the run with Ctrl-C and checks that the report is exact (exit 130, every packet
# delivered, the pool full) and that, after a minute's warm-up, the last third of the samples
# sits no higher than the first third: RSS by at most 2% + 8 MiB (means), flows by at most
# 10% + 64 (means), mbufs in use (mean) above the first third's peak by at most 256 (they follow
# the queues' fill), and the mbufs in use that are no packet in flight (what a leak grows) by at
# most 256 (medians).
# Exit 1 otherwise. Each table holds 1024 flows, so the first minute touches every page of the
# tables (with the default 65536, RSS grows for a quarter of an hour as the hash's free slots
# cycle through the table the first time: memory touched once, not a leak).
#
# Environment: TILEPIPE_BIN (default build/apps/tilepipe), SOAK_PCAP (default the firewall's
# capture), SOAK_OUT (folder for samples.csv, stats.jsonl and report.json; default a temporary
# one, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
minutes=${1:-}
if ! [[ "$minutes" =~ ^[0-9]+(\.[0-9]+)?$ ]] || [ "$(python3 -c "print(float('$minutes') > 0)")" != True ]; then
  echo "usage: scripts/soak.sh MINUTES (a positive number)" >&2
  exit 2
fi
bin=${TILEPIPE_BIN:-$root/build/apps/tilepipe}
pcap=${SOAK_PCAP:-$root/../shared/pcaps/pcpp__example.pcap}
[ -x "$bin" ] || { echo "soak.sh: no tilepipe at $bin (build it, or set TILEPIPE_BIN)" >&2; exit 2; }
[ -r "$pcap" ] || { echo "soak.sh: cannot read capture $pcap (set SOAK_PCAP)" >&2; exit 2; }

if [ -n "${SOAK_OUT:-}" ]; then
  out=$SOAK_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
prefix=tp-soak-$$
cat >"$out/soak.yaml" <<EOF
app: soak
pipeline:
  - { stage: pcap, name: src, file: '$pcap' }
  - stage: parse
  - farm:
      name: fw
      workers: 4
      dispatch: flow_hash
      worker:
        - { stage: acl, rules: '$root/conf/data/firewall.rules', default: permit }
        - { stage: flow_table, idle_timeout: 0.002, capacity: 1024 }
  - stage: drop
EOF

"$bin" run "$out/soak.yaml" --loop 0 --quiet --stats-interval 1 --stats-out "$out/stats.jsonl" \
  --json "$out/report.json" --eal "--file-prefix $prefix" >"$out/run.out" 2>"$out/run.err" &
pid=$!
echo "soak: $minutes min of $(basename "$pcap") through acl + flow_table (idle 2 ms) x 4 -> drop, pid $pid"

set +e
python3 - "$pid" "$minutes" "$prefix" "$out" <<'PY'
import json, os, socket, sys, time

pid, minutes, prefix, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]

def runtime_dir():
    # EAL 22.11's rule (framework/eal/eal_session.hpp): $RUNTIME_DIRECTORY, /var/run for
    # root, $XDG_RUNTIME_DIR or /tmp for others, then dpdk/<file prefix>.
    base = os.environ.get("RUNTIME_DIRECTORY") or ("/var/run" if os.getuid() == 0 else
                                                  os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    return os.path.join(base, "dpdk", prefix)

def telemetry(cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(os.path.join(runtime_dir(), "dpdk_telemetry.v2"))
        hello = json.loads(s.recv(1 << 16))
        s.send(cmd.encode())
        return json.loads(s.recv(hello.get("max_output_len", 1 << 16)))
    finally:
        s.close()

def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

def live_flows():
    n = 0
    try:
        with open(os.path.join(out, "stats.jsonl")) as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # a line still being written
                for st in json.loads(line).get("stages", []):
                    if st.get("stage") == "flow_table":
                        ev = st.get("events", {})
                        n += ev.get("new_flow", 0) - ev.get("expired", 0)
    except FileNotFoundError:
        pass
    return n

def pool_in_use():
    # Mbufs out of the pool, and how many of them are not packets in flight (emitted, not yet
    # delivered or dropped): the latter is what a leak would grow. One view, so both are read
    # within microseconds of each other.
    stats = telemetry("/tilepipe/stats")["/tilepipe/stats"]
    if stats.get("state") != "running":
        return None
    in_use = stats["pool_mbufs"] - stats["pool_available"]
    return in_use, in_use - (stats["packets"] - stats["delivered"] - stats["drops"])

samples = []
start = time.time()
end = start + minutes * 60
with open(os.path.join(out, "samples.csv"), "w") as csv:
    csv.write("seconds,rss_kib,live_flows,pool_in_use,pool_beyond_in_flight\n")
    while time.time() < end:
        time.sleep(min(5, max(0.0, end - time.time())))
        if not os.path.exists(f"/proc/{pid}"):
            print("soak: the run ended on its own", file=sys.stderr)
            sys.exit(1)
        try:
            pool = pool_in_use()
        except (OSError, ValueError, KeyError):
            pool = None  # telemetry not up yet (still loading)
        if pool is None:
            continue
        row = (round(time.time() - start, 1), rss_kib(), live_flows(), pool[0], pool[1])
        samples.append(row)
        csv.write(",".join(map(str, row)) + "\n")
        csv.flush()

warm = [s for s in samples if s[0] >= min(60, minutes * 60 / 3)]
if len(warm) < 6:
    print(f"soak: only {len(warm)} samples after the warm-up: run longer", file=sys.stderr)
    sys.exit(1)
third = len(warm) // 3
first, last = warm[:third], warm[-third:]
mean = lambda rows, i: sum(r[i] for r in rows) / len(rows)
median = lambda rows, i: sorted(r[i] for r in rows)[len(rows) // 2]
checks = [
    ("RSS MiB (mean)", mean(first, 1) / 1024, mean(last, 1) / 1024, mean(first, 1) / 1024 * 1.02 + 8),
    ("live flows (mean)", mean(first, 2), mean(last, 2), mean(first, 2) * 1.10 + 64),
    ("pool mbufs in use (mean)", mean(first, 3), mean(last, 3), max(r[3] for r in first) + 256),
    ("pool beyond in flight (median)", median(first, 4), median(last, 4), max(median(first, 4), 0) + 256),
]
ok = True
print(f"soak: {len(samples)} samples over {samples[-1][0]:.0f} s; first third vs last third after the warm-up:")
for name, a, b, limit in checks:
    flat = b <= limit
    ok &= flat
    print(f"  {name:30s} {a:12.1f} -> {b:12.1f}  (limit {limit:.1f})  {'flat' if flat else 'GROWING'}")
print(f"  peaks: RSS {max(r[1] for r in samples) / 1024:.1f} MiB, flows {max(r[2] for r in samples)}, "
      f"pool in use {max(r[3] for r in samples)}")
sys.exit(0 if ok else 1)
PY
flat=$?
kill -INT "$pid" 2>/dev/null
wait "$pid"
status=$?
set -e

exact=$(python3 - "$out/report.json" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("no report"); sys.exit()
ok = j["unaccounted"] == 0 and j["pools_full"] and j["drops"] == 0 and j["delivered"] == j["packets"]
print(f"{j['packets']} packets in {j['seconds']:.0f} s ({j['mpps']:.2f} Mpps), delivered {j['delivered']}, "
      f"dropped {j['drops']}, unaccounted {j['unaccounted']}, pools {'full' if j['pools_full'] else 'NOT full'}"
      + ("" if ok else " -- NOT EXACT"))
PY
)
echo "soak: report: $exact (exit status $status)"
if [ "$status" -ne 130 ] || [[ "$exact" == *"NOT"* ]] || [[ "$exact" == "no report" ]]; then
  echo "soak: FAILED: the run did not end exact after Ctrl-C" >&2
  cat "$out/run.err" >&2
  exit 1
fi
if [ "$flat" -ne 0 ]; then
  echo "soak: FAILED: not flat" >&2
  exit 1
fi
echo "soak: ok"
