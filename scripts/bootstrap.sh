#!/usr/bin/env bash
# Installs what tilepipe needs to build and test, from Debian 12's packages. Idempotent: when
# everything is present it prints nothing and touches nothing. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

packages=(
  g++ meson ninja-build pkg-config
  libdpdk-dev libpcap-dev libspdlog-dev libyaml-cpp-dev libgtest-dev libhwloc-dev
  libboost-dev libreaderwriterqueue-dev libcli11-dev nlohmann-json3-dev
  tcpdump tshark
  clang libclang-rt-14-dev  # libFuzzer (tests/fuzz; the runtime is only recommended by clang)
  dpdk-dev            # dpdk-telemetry.py, the stock client the telemetry tests drive
  python3-matplotlib  # `tilepipe plot`
  libopenmpi-dev openmpi-bin  # the message-passing API's mpi backend, mpirun for its tests
  prometheus-cpp-dev libcivetweb-dev  # `run --metrics`: prometheus-cpp's Exposer on civetweb
  chromium            # the live page's test loads it in a real browser (headless)
)
# Extra packages a caller needs (e.g. `dpdk-dev` for dpdk-testpmd in the benchmarks).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "bootstrap: apt-get failed (log above)" >&2
  exit 1
fi
rm -f "$log"
